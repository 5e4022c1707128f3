/* template_api.c — see template_api.h. */
#include "template_api.h"

#include <stdio.h>
#include <string.h>

#include "e2b_api.h"
#include "errors.h"
#include "json_add.h"
#include "url.h"

e2bw_http_op *e2bw_template_request(e2bw_core *core, e2bw_call *call, const char *method,
	const char *const *parts, const cJSON *body, e2bw_http_done_fn on_done)
{
	e2bw_buf path = {0};
	int rc = 0;
	for (int i = 0; parts[i]; i++)
		rc |= i % 2 ? e2bw_url_encode_str(&path, parts[i]) : e2bw_buf_append_str(&path, parts[i]);
	e2bw_http_op *op = NULL;
	if (rc)
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		op = e2bw_api_request(core, call, method, path.data, body, on_done);
	e2bw_buf_free(&path);
	return op;
}

cJSON *e2bw_template_error(const e2bw_http_op *op, const char *template_id)
{
	if (op->status != 404)
		return e2bw_api_error(op, NULL);
	cJSON *e;
	if (template_id) {
		e = e2bw_error_new(E2BW_ERR_NOT_FOUND,
			"Template '%.200s' not found (or not its build) on the E2B backend", template_id);
		e2bw_error_set_str(e, "sdk_code", E2BW_SDK_TEMPLATE_NOT_FOUND);
	} else {
		e = e2bw_error_new(E2BW_ERR_UNSUPPORTED,
			"The E2B backend at %s has no template API (%s answered HTTP 404)", op->origin,
			op->what);
		e2bw_error_set_str(e, "feature", "templates.build");
	}
	return e2bw_error_set_num(e, "http_status", 404);
}

void e2bw_template_fail(e2bw_core *core, e2bw_http_op *op, const char *template_id)
{
	e2bw_call *call = op->call;
	cJSON *error = e2bw_template_error(op, template_id);
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, error);
}

static const char *str_of(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *e2bw_template_log(const cJSON *entry)
{
	static const char *const levels[] = {"debug", "info", "warn", "error"};
	const char *message = str_of(entry, "message"), *level = str_of(entry, "level"),
		   *time = str_of(entry, "timestamp");
	const char *step = str_of(entry, "step");
	if (!message || !time)
		return NULL;
	const char *lv = "info";
	for (int i = 0; level && i < 4; i++)
		if (!strcmp(level, levels[i]))
			lv = levels[i];
	cJSON *log = cJSON_CreateObject();
	cJSON_AddStringToObject(log, "level", lv);
	cJSON_AddStringToObject(log, "message", message);
	cJSON_AddStringToObject(log, "timestamp", time);
	if (step)
		cJSON_AddStringToObject(log, "step", step);
	return log;
}

static void copy_as(cJSON *dst, const char *dst_name, const cJSON *src, const char *src_name, int type_mask)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(src, src_name);
	if (v && (v->type & type_mask))
		e2bw_add(dst, dst_name, cJSON_Duplicate(v, 1));
}

cJSON *e2bw_template_record(const cJSON *t)
{
	const char *id = str_of(t, "templateID");
	if (!id || !id[0])
		return NULL;
	cJSON *rec = cJSON_CreateObject();
	cJSON_AddStringToObject(rec, "template_id", id);
	static const char *const fields[][2] = {{"names", "names"}, {"build_id", "buildID"},
		{"status", "buildStatus"}, {"cpu", "cpuCount"}, {"memory", "memoryMB"},
		{"disk", "diskSizeMB"}, {"public", "public"}, {"created_at", "createdAt"},
		{"updated_at", "updatedAt"}, {"envd_version", "envdVersion"}};
	static const int types[] = {cJSON_Array, cJSON_String, cJSON_String, cJSON_Number, cJSON_Number,
		cJSON_Number, cJSON_True | cJSON_False, cJSON_String, cJSON_String, cJSON_String};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		copy_as(rec, fields[i][0], t, fields[i][1], types[i]);
	return rec;
}
