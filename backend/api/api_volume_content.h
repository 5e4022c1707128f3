/* The volume content API (E2B's /volumecontent/{volumeID}/...), what the
 * SDK's Volume instance methods call: list and make directories (dir), stat,
 * change owner and mode, and remove (path), read and write files (file).
 * Authorised by the volume's own token (Authorization: Bearer), not the API
 * key. Paths are the volume's, resolved beneath its data directory by the
 * kernel (envd/fs/fs_path.h): a symbolic link a sandbox left on the volume
 * cannot lead out of it. Ids are the volume's (a sandbox's root is 0, its
 * user 1000). Calls volumes/, envd/fs (paths), http/ and lib/. */
#ifndef E2B_BACKEND_API_VOLUME_CONTENT_H
#define E2B_BACKEND_API_VOLUME_CONTENT_H

#include "api/api_ctx.h"

int api_volume_content_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_content_mkdir(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_content_stat(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_content_update(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_content_remove(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_content_read(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_content_write(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
