/* E2B's template API (the routes the official SDK's Template builder
 * calls), first half: create a template and a build (POST /v3/templates),
 * upload links and uploads of COPY files. The rest is
 * api_template_builds.h; the catalog and the executor are templates/'s. */
#ifndef E2B_BACKEND_API_TEMPLATES_H
#define E2B_BACKEND_API_TEMPLATES_H

#include "api/api_ctx.h"

int api_templates_request(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_file_link(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_templates_file_upload(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
/* Whether a head for /templates/{id}/files/{hash} (path, query or NULL)
 * carries that hash's upload token: the router reads a large body only then. */
bool api_templates_upload_link_ok(const char *path, const char *query);

#endif
