/* The control plane's snapshot and fork routes: POST
 * /sandboxes/{id}/snapshots (createSnapshot), GET /snapshots
 * (listSnapshots, filtered by name or sandbox), DELETE /templates/{id}
 * (deleteSnapshot: the SDK deletes a snapshot as the template it is) and
 * POST /sandboxes/{id}/fork. Capturing answers later (the seal runs off the
 * loop). Calls snapshots/, registry/, api_sandboxes.c (starting a fork),
 * http/ and lib/. */
#ifndef E2B_BACKEND_API_SNAPSHOTS_H
#define E2B_BACKEND_API_SNAPSHOTS_H

#include "api/api_ctx.h"

#define API_FORK_MAX 16 /* forks per request */

int api_snapshot_create(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_snapshot_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_snapshot_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_fork(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
