/* POST /sandboxes (v1) and /v2/sandboxes: a new sandbox of a built-in
 * template, a built template (its stack of layers, environment, user,
 * workdir, start and ready commands) or a snapshot, claimed from the warm
 * pool when one of its shape is ready (warm/), else started now. Calls templates/, snapshots/, warm/, registry/, runtime/, net/ and
 * http/. */
#ifndef E2B_BACKEND_API_CREATE_H
#define E2B_BACKEND_API_CREATE_H

#include "api/api_ctx.h"

int api_create_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_create_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
