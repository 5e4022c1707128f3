/* The control plane's volume routes (E2B's /volumes): create, list, get
 * and delete, answered with E2B's Volume and VolumeAndToken shapes. Calls
 * volumes/, http/. */
#ifndef E2B_BACKEND_API_VOLUMES_H
#define E2B_BACKEND_API_VOLUMES_H

#include "api/api_ctx.h"

struct cJSON;
struct volume;

int api_volume_create(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_volume_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
