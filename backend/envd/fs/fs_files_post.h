/* envd's POST /files (docs/e2b-protocol-notes.md, "Files"). It takes
 * multipart/form-data (parts named "file"; the target is the `path`
 * parameter, else the part's full filename) or application/octet-stream
 * (needs `path`), optionally with Content-Encoding: gzip. Parents are
 * created and every new file and directory belongs to the requesting user
 * (`username`, by default the sandbox's default user). X-Metadata-<key> headers become
 * user.e2b.<key> xattrs. The body is never held whole: the gate streams
 * it (http_gate.h, STREAM) and fs_upload.c writes it to the files in slices
 * as it arrives; this file opens, finishes and reports each file. Calls
 * fs_upload.c, fs_files.c, fs_path.c, fs_entry.c, http/ and lib/. */
#ifndef E2B_BACKEND_FS_FILES_POST_H
#define E2B_BACKEND_FS_FILES_POST_H

#include "envd/fs/fs_ctx.h"

int files_post(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
