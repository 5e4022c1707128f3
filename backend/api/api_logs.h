/* A sandbox's logs, E2B's routes (registry/registry_log.h has what is kept):
 * GET /sandboxes/{id}/logs?start&limit, SandboxLogs (`logs` as raw JSON
 * lines and `logEntries`, oldest first, from `start` in Unix ms), and
 * GET /v2/sandboxes/{id}/logs?cursor&limit&direction&level&search,
 * SandboxLogsV2Response (backward from `cursor`, newest first, by default;
 * forward from it, oldest first; entries of `level` or above whose message
 * holds `search`). 404 for a sandbox the backend does not have. Calls
 * registry/ and http/. */
#ifndef E2B_BACKEND_API_LOGS_H
#define E2B_BACKEND_API_LOGS_H

#include "api/api_ctx.h"

int api_logs_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_logs_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
