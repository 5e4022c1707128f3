/* templates_manage.h — templates.get (a build's status and its logs from an
 * offset: GET /templates/{id}/builds/{build}/status?logsOffset=N),
 * templates.list (GET /v2/templates, one page) and templates.delete
 * (DELETE /templates/{id}). docs/templates.md. */
#ifndef E2BW_TEMPLATES_MANAGE_H
#define E2BW_TEMPLATES_MANAGE_H

#include "calls.h"
#include "core_state.h"

void e2bw_templates_get(e2bw_core *core, e2bw_call *call);
void e2bw_templates_list(e2bw_core *core, e2bw_call *call);
void e2bw_templates_delete(e2bw_core *core, e2bw_call *call);

#endif
