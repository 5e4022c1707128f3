/* The control plane's secret routes (E2B's /secrets): create, list (paged
 * with the list cursor and X-Next-Token), get, update and delete, answered
 * with E2B's Secret shape, which never carries the value. Calls secrets/,
 * http/, lib/. */
#ifndef E2B_BACKEND_API_SECRETS_H
#define E2B_BACKEND_API_SECRETS_H

#include "api/api_ctx.h"

int api_secret_create(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_secret_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_secret_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_secret_update(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_secret_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
