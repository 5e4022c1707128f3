/* template_api.h — E2B's template API as the templates.* handlers share it
 * (docs/templates.md, "Requests"): request paths with their ids encoded,
 * HTTP errors (a missing template is -32002 with sdk_code E4001, a backend
 * without the API -32003), and E2B's build log entries and template records
 * as EPP shapes. Calls e2b_api.c and below. */
#ifndef E2BW_TEMPLATE_API_H
#define E2BW_TEMPLATE_API_H

#include "cJSON.h"
#include "calls.h"
#include "core_state.h"
#include "http_ops.h"

/* `method <api_url><path>` where path is parts[0] + enc(parts[1]) +
 * parts[2] + enc(parts[3]) ... (NULL-terminated: the odd parts are ids,
 * percent-encoded). NULL after failing the call. */
e2bw_http_op *e2bw_template_request(e2bw_core *core, e2bw_call *call, const char *method,
	const char *const *parts, const cJSON *body, e2bw_http_done_fn on_done);

/* The typed error for a non-2xx answer about template_id (NULL: a request
 * that names none, e.g. creating one): 404 is "template not found" (-32002,
 * E4001), or, for a request that names no template, a backend without the
 * template API (-32003). */
cJSON *e2bw_template_error(const e2bw_http_op *op, const char *template_id);
/* Ends the call with that error. */
void e2bw_template_fail(e2bw_core *core, e2bw_http_op *op, const char *template_id);

/* A build log entry ({level, message, timestamp, step?}) in EPP's shape,
 * level one of debug, info, warn, error (else info). NULL when it has no
 * message or no timestamp (E2B's BuildLogEntry requires both). */
cJSON *e2bw_template_log(const cJSON *entry);

/* A template record from E2B's `Template`; NULL without templateID. */
cJSON *e2bw_template_record(const cJSON *t);

#endif
