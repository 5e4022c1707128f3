/* envd's plain-HTTP file transfer, GET and POST /files (reference §6).
 *
 * GET streams the file (never held in memory) with backpressure: it reads
 * the next piece only while the connection's unsent output is under
 * FILES_HIGH_WATER. One byte range (Range: bytes=a-b, a-, -n) gives 206;
 * Accept-Encoding that allows gzip gives a gzip body unless a Range or
 * conditional header is present, as envd does.
 *
 * POST takes multipart/form-data (parts named "file"; the target is the
 * `path` parameter, else the part's full filename) or
 * application/octet-stream (needs `path`), optionally with
 * Content-Encoding: gzip. Parents are created and every new file and
 * directory belongs to the requesting user (`username`, default "user").
 * X-Metadata-<key> headers become user.e2b.<key> xattrs. */
#ifndef E2B_BACKEND_FILES_HTTP_H
#define E2B_BACKEND_FILES_HTTP_H

#include "envd/envd_routes.h"

#define FILES_MAX_UPLOAD_BYTES (256LL * 1024 * 1024) /* one POST /files body */
#define FILES_HIGH_WATER (1024 * 1024)
#define FILES_READ_CHUNK (256 * 1024)

int files_get(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int files_post(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
