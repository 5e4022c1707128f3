/* E2B's template API, second half: start a build, its status and log,
 * aliases, one template, deleting, listing and tags. */
#ifndef E2B_BACKEND_API_TEMPLATE_BUILDS_H
#define E2B_BACKEND_API_TEMPLATE_BUILDS_H

#include "api/api_ctx.h"

int api_templates_build_start(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_build_status(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_alias(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_tags_assign(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_tags_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_tags_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
