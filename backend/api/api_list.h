/* The control plane's list routes: GET /v2/sandboxes (filters, paging
 * with X-Next-Token, X-Total-Running) and GET /sandboxes. Calls the list
 * cursor, the sandbox JSON shapes, registry/, http/ and lib/. */
#ifndef E2B_BACKEND_API_LIST_H
#define E2B_BACKEND_API_LIST_H

#include "api/api_ctx.h"

int api_list_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_list_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
