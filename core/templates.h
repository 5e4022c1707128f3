/* templates.h — templates.build: a template built through E2B's template
 * API with the requests the official SDK's Template.build makes, in its
 * order (docs/templates.md): POST /v3/templates; per COPY step GET
 * /templates/{id}/files/{hash} and, when the backend lacks those files, a
 * PUT of their gzipped tar to the link it gives; POST
 * /v2/templates/{id}/builds/{build} with the steps; then GET
 * .../status?logsOffset=N every 200 ms, each new log entry a templates.log
 * notification, until the build is ready (the answer) or failed (a
 * build_failed error with the failing step and the log's tail). */
#ifndef E2BW_TEMPLATES_H
#define E2BW_TEMPLATES_H

#include "calls.h"
#include "core_state.h"

void e2bw_templates_build(e2bw_core *core, e2bw_call *call);

#endif
