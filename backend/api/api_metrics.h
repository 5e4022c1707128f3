/* Sandbox metrics on the control plane: GET /sandboxes/{id}/metrics?start=&end=
 * (E2B's SandboxMetric[], the samples of metrics/ in a range of Unix
 * seconds) and GET /sandboxes/metrics?sandbox_ids=a,b (SandboxesWithMetrics:
 * the latest sample of each listed running sandbox). */
#ifndef E2B_BACKEND_API_METRICS_H
#define E2B_BACKEND_API_METRICS_H

#include "api/api_ctx.h"

#define API_METRICS_MAX_IDS 100 /* sandbox_ids per request, as E2B's API */

int api_sandbox_metrics(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_sandboxes_metrics(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
