/* sandbox_metrics.h — sandbox.metrics (ours: a sandbox's CPU, memory and disk
 * samples over time) and the latest of them that sandbox.get adds with
 * `metrics: true`, from E2B's GET /sandboxes/{id}/metrics. Calls e2b_api.c,
 * calls.c and the codecs below, never the method table. */
#ifndef E2BW_SANDBOX_METRICS_H
#define E2BW_SANDBOX_METRICS_H

#include "calls.h"
#include "core_state.h"

void e2bw_sandbox_metrics(e2bw_core *core, e2bw_call *call);
/* Answers the call with rec (a running sandbox's record, taken) plus its
 * latest sample as rec.metrics, when the backend has one from the last
 * 120 s; with rec as it is when not, or when the request fails. */
void e2bw_sandbox_metrics_latest(e2bw_core *core, e2bw_call *call, cJSON *rec);

#endif
