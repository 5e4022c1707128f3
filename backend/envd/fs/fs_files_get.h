/* envd's GET /files (docs/e2b-protocol-notes.md, "Files"). It streams the
 * file (never held in memory) with backpressure: it reads the next piece
 * only while the connection's unsent output is under FILES_HIGH_WATER, and
 * at most FILES_STEP_INPUT bytes (FILES_STEP_US of time) per loop turn, so
 * a gzip of a sparse file cannot hold the loop. It ends with the
 * connection when the sandbox is killed (the tracker cuts it). One
 * byte range (Range: bytes=a-b, a-, -n) gives 206; Accept-Encoding that
 * allows gzip gives a gzip body unless a Range or conditional header is
 * present, as envd does. Calls fs_files.c (the shared prelude), fs_path.c,
 * http/ and lib/. */
#ifndef E2B_BACKEND_FS_FILES_GET_H
#define E2B_BACKEND_FS_FILES_GET_H

#include "envd/fs/fs_ctx.h"

#define FILES_HIGH_WATER (1024 * 1024)
#define FILES_READ_CHUNK (256 * 1024)
#define FILES_STEP_INPUT (4 * 1024 * 1024) /* file bytes one loop turn reads at most */
#define FILES_STEP_US 10000                /* ... and for at most this long */

int files_get(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
