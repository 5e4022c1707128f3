/* templates_manage.c — see templates_manage.h. */
#include "templates_manage.h"

#include <stdio.h>
#include <string.h>

#include "e2b_api.h"
#include "errors.h"
#include "json_add.h"
#include "template_api.h"
#include "url.h"

static void answer(e2bw_core *core, e2bw_http_op *op, cJSON *result)
{
	e2bw_call *call = op->call;
	e2bw_http_op_finish(core, op);
	e2bw_call_succeed(core, call, result);
}

static void bad_record(e2bw_core *core, e2bw_http_op *op, cJSON *partial, const char *what)
{
	e2bw_call *call = op->call;
	cJSON_Delete(partial);
	cJSON *e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "The E2B backend's answer to %s has %s", op->what,
		what);
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, e);
}

/* --- templates.get ------------------------------------------------------------ */

static void got(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, e2bw_call_param_str(call, "template_id"));
		return;
	}
	cJSON *info = e2bw_api_json(core, op, 0);
	if (!info)
		return;
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(info, "status");
	const cJSON *entries = cJSON_GetObjectItemCaseSensitive(info, "logEntries"), *entry;
	const cJSON *reason = cJSON_GetObjectItemCaseSensitive(info, "reason");
	if (!cJSON_IsString(status) || (entries && !cJSON_IsArray(entries))) {
		bad_record(core, op, info, "no status, or logEntries that are not an array");
		return;
	}
	const cJSON *offset = cJSON_GetObjectItemCaseSensitive(call->params, "logs_offset");
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "template_id", e2bw_call_param_str(call, "template_id"));
	cJSON_AddStringToObject(r, "build_id", e2bw_call_param_str(call, "build_id"));
	cJSON_AddStringToObject(r, "status", status->valuestring);
	cJSON *logs = cJSON_AddArrayToObject(r, "logs");
	cJSON_ArrayForEach(entry, entries) {
		cJSON *log = e2bw_template_log(entry);
		if (log)
			e2bw_push(logs, log);
	}
	cJSON_AddNumberToObject(r, "logs_offset",
		(cJSON_IsNumber(offset) ? offset->valuedouble : 0) + cJSON_GetArraySize(entries));
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(reason, "message"),
		    *step = cJSON_GetObjectItemCaseSensitive(reason, "step");
	if (cJSON_IsString(message)) {
		cJSON *why = cJSON_AddObjectToObject(r, "reason");
		cJSON_AddStringToObject(why, "message", message->valuestring);
		if (cJSON_IsString(step))
			cJSON_AddStringToObject(why, "step", step->valuestring);
	}
	cJSON_Delete(info);
	answer(core, op, r);
}

void e2bw_templates_get(e2bw_core *core, e2bw_call *call)
{
	const cJSON *offset = cJSON_GetObjectItemCaseSensitive(call->params, "logs_offset");
	char query[64];
	snprintf(query, sizeof query, "/status?logsOffset=%.0f",
		cJSON_IsNumber(offset) ? offset->valuedouble : 0.0);
	const char *parts[] = {"/templates/", e2bw_call_param_str(call, "template_id"), "/builds/",
		e2bw_call_param_str(call, "build_id"), query, NULL};
	e2bw_template_request(core, call, "GET", parts, NULL, got);
}

/* --- templates.list ------------------------------------------------------------ */

static void listed(e2bw_core *core, e2bw_http_op *op)
{
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, NULL);
		return;
	}
	cJSON *page = e2bw_api_json(core, op, 1);
	if (!page)
		return;
	cJSON *r = cJSON_CreateObject(), *all = cJSON_AddArrayToObject(r, "templates");
	const cJSON *item;
	cJSON_ArrayForEach(item, page) {
		cJSON *rec = e2bw_template_record(item);
		if (!rec) {
			cJSON_Delete(page);
			bad_record(core, op, r, "a template without templateID");
			return;
		}
		e2bw_push(all, rec);
	}
	cJSON_Delete(page);
	char token[512] = "";
	e2bw_http_header(op, "x-next-token", token, sizeof token);
	if (token[0])
		cJSON_AddStringToObject(r, "next_token", token);
	else
		cJSON_AddNullToObject(r, "next_token");
	answer(core, op, r);
}

void e2bw_templates_list(e2bw_core *core, e2bw_call *call)
{
	const cJSON *limit = cJSON_GetObjectItemCaseSensitive(call->params, "limit");
	const char *next = e2bw_call_param_str(call, "next_token");
	e2bw_buf q = {0};
	int rc = e2bw_buf_append_str(&q, "/v2/templates");
	char number[32];
	snprintf(number, sizeof number, "%d", cJSON_IsNumber(limit) ? (int)limit->valuedouble : 0);
	if (cJSON_IsNumber(limit))
		rc |= e2bw_buf_append_str(&q, "?limit=") || e2bw_buf_append_str(&q, number);
	if (next)
		rc |= e2bw_buf_append_str(&q, cJSON_IsNumber(limit) ? "&nextToken=" : "?nextToken=") ||
			e2bw_url_encode_str(&q, next);
	if (rc)
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		e2bw_api_request(core, call, "GET", q.data, NULL, listed);
	e2bw_buf_free(&q);
}

/* --- templates.delete --------------------------------------------------------- */

static void deleted(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, e2bw_call_param_str(call, "template_id"));
		return;
	}
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "template_id", e2bw_call_param_str(call, "template_id"));
	cJSON_AddTrueToObject(r, "deleted");
	answer(core, op, r);
}

void e2bw_templates_delete(e2bw_core *core, e2bw_call *call)
{
	const char *parts[] = {"/templates/", e2bw_call_param_str(call, "template_id"), NULL};
	e2bw_template_request(core, call, "DELETE", parts, NULL, deleted);
}
