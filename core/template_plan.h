/* template_plan.h — what templates.build asks E2B to build: the body of
 * POST /v2/templates/{id}/builds/{build} (TemplateBuildStartV2) made from
 * the call's params — a Dockerfile (dockerfile.c) or E2B's own steps, the
 * base, the start and ready commands, skip_cache — with each COPY step's
 * files hash (template_context.c). Pure: no core. */
#ifndef E2BW_TEMPLATE_PLAN_H
#define E2BW_TEMPLATE_PLAN_H

#include "cJSON.h"

/* On success returns NULL and sets *plan (the body) and *lines (the
 * Dockerfile line of E2B's step k at index k; all 0 for steps). The
 * context's paths are made canonical in place. Else returns an
 * invalid_params error naming the field (and line), or NULL with *plan
 * NULL when out of memory. */
cJSON *e2bw_template_plan(cJSON *params, cJSON **plan, cJSON **lines);

#endif
