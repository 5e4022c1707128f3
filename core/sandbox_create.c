/* sandbox_create.c — sandbox.create over E2B's POST /sandboxes (v2, or v1
 * for a sandbox without an envd token), and the recovery of a create whose
 * answer was lost. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "e2b_api.h"
#include "envd.h"
#include "errors.h"
#include "json_add.h"
#include "sandbox.h"
#include "sandbox_create.h"

/* E2B takes whole seconds; never round a requested lifetime down. */
static double whole_seconds(double s)
{
	return ceil(s);
}

static const char *const looked_fields[] = {"created_at", "expires_at", "cpu", "memory", "disk", NULL};

static void create_looked(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *rec = call->scratch;
	call->scratch = NULL;
	cJSON *detail = e2bw_http_ok(op->status) ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	cJSON *full = detail ? e2bw_record_from_detail(&core->config, detail) : NULL;
	for (const char *const *f = looked_fields; full && *f; f++)
		if (cJSON_HasObjectItem(full, *f))
			e2bw_add(rec, *f, cJSON_DetachItemFromObjectCaseSensitive(full, *f));
	cJSON_Delete(full);
	cJSON_Delete(detail);
	e2bw_sandbox_succeed(core, op, rec);
}

static void create_look_failed(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	cJSON_Delete(error); /* the sandbox was created: answer with what is known */
	e2bw_call *call = op->call;
	cJSON *rec = call->scratch;
	call->scratch = NULL;
	e2bw_call_succeed(core, call, rec);
}

static void created(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		if (op->status == 404) {
			const char *tpl = e2bw_call_param_str(call, "template");
			cJSON *e = e2bw_error_new(E2BW_ERR_NOT_FOUND,
				"Template '%s' not found on the E2B backend", tpl ? tpl : "base");
			e2bw_error_set_num(e, "http_status", 404);
			e2bw_error_set_str(e, "sdk_code", E2BW_SDK_TEMPLATE_NOT_FOUND);
			e2bw_http_op_finish(core, op);
			e2bw_call_fail(core, call, e);
			return;
		}
		e2bw_sandbox_fail_status(core, op, NULL);
		return;
	}
	cJSON *sandbox = e2bw_api_json(core, op, 0);
	if (!sandbox)
		return;
	e2bw_sandbox_remember(core, sandbox); /* its envd token, for exec */
	cJSON *rec = e2bw_record_from_sandbox(&core->config, sandbox);
	cJSON_Delete(sandbox);
	if (!rec) {
		e2bw_sandbox_fail_bad_record(core, op);
		return;
	}
	/* The create answer carries no metadata; echo what E2B stored from us. */
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(call->params, "metadata");
	e2bw_add(rec, "metadata",
		cJSON_IsObject(metadata) ? cJSON_Duplicate(metadata, 1) : cJSON_CreateObject());
	/* ...nor its times or the resources it really got: read them from its
   * detail, as sandbox.get reports them (best effort: the sandbox exists) */
	e2bw_buf path = {0};
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(rec, "sandbox_id");
	e2bw_http_op_finish(core, op);
	cJSON_Delete(call->scratch);
	call->scratch = rec;
	e2bw_http_op *look = NULL;
	if (!cJSON_IsString(id) || e2bw_sandbox_path(&path, "/sandboxes/", id->valuestring, ""))
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		look = e2bw_api_request(core, call, "GET", path.data, NULL, create_looked);
	e2bw_buf_free(&path);
	if (look)
		look->on_fail = create_look_failed;
}

/* A create whose answer was lost (the connection cut, no answer in time)
 * may have made a sandbox nobody knows about: it is looked up by the
 * create's key and returned, so a retried create never leaks one. Found
 * nothing (or the lookup fails too): the original error. */

static void create_give_up(e2bw_core *core, e2bw_call *call)
{
	cJSON *error = cJSON_DetachItemFromObjectCaseSensitive(call->scratch, "error");
	e2bw_call_fail(core, call, error ? error : e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
}

static void create_recovery_failed(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	cJSON_Delete(error);
	create_give_up(core, op->call);
}

static void create_recovered(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *detail = e2bw_http_ok(op->status) ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	cJSON *rec = detail ? e2bw_record_from_detail(&core->config, detail) : NULL;
	if (rec)
		e2bw_sandbox_remember(core, detail); /* its envd token, for exec */
	cJSON_Delete(detail);
	e2bw_http_op_finish(core, op);
	if (rec)
		e2bw_call_succeed(core, call, rec);
	else
		create_give_up(core, call);
}

static void create_found(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *page = e2bw_http_ok(op->status) ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(page, 0), "sandboxID");
	e2bw_buf path = {0};
	e2bw_http_op *look = NULL;
	int found = cJSON_IsString(id) && !e2bw_sandbox_path(&path, "/sandboxes/", id->valuestring, "");
	cJSON_Delete(page);
	e2bw_http_op_finish(core, op);
	if (found)
		look = e2bw_api_request(core, call, "GET", path.data, NULL, create_recovered);
	else
		create_give_up(core, call);
	e2bw_buf_free(&path);
	if (look)
		look->on_fail = create_recovery_failed;
}

static void create_lost(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_call *call = op->call;
	const cJSON *kind =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(error, "data"), "kind");
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(call->scratch, "key");
	int lost = cJSON_IsString(kind) &&
		(!strcmp(kind->valuestring, "unreachable") || !strcmp(kind->valuestring, "timeout"));
	if (!lost || !cJSON_IsString(key) || !e2bw_add(call->scratch, "error", error)) {
		if (lost && cJSON_IsString(key))
			error = NULL; /* e2bw_add freed it */
		e2bw_call_fail(core, call,
			error ? error : e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	cJSON *filter = cJSON_CreateObject();
	e2bw_buf q = {0};
	int rc = !cJSON_AddStringToObject(filter, E2BW_CREATE_KEY, key->valuestring) ||
		e2bw_buf_append_str(&q, "/v2/sandboxes?state=running,paused") ||
		e2bw_sandbox_metadata_query(&q, filter);
	cJSON_Delete(filter);
	e2bw_http_op *find = rc ? NULL : e2bw_api_request(core, call, "GET", q.data, NULL, create_found);
	if (rc)
		create_give_up(core, call);
	e2bw_buf_free(&q);
	if (find)
		find->on_fail = create_recovery_failed;
}

/* options: E2B-specific create settings, named in EPP style. */
static cJSON *apply_options(cJSON *body, const cJSON *options)
{
	const cJSON *opt;
	cJSON_ArrayForEach(opt, options) {
		const char *k = opt->string;
		const char *expect = NULL;
		if (!strcmp(k, "auto_pause")) {
			if (cJSON_IsBool(opt))
				cJSON_AddBoolToObject(body, "autoPause", cJSON_IsTrue(opt));
			else
				expect = "must be a boolean";
		} else if (!strcmp(k, "auto_resume")) {
			if (cJSON_IsBool(opt))
				cJSON_AddBoolToObject(cJSON_AddObjectToObject(body, "autoResume"), "enabled",
					cJSON_IsTrue(opt));
			else
				expect = "must be a boolean";
		} else if (!strcmp(k, "allow_internet_access")) {
			if (cJSON_IsBool(opt))
				cJSON_AddBoolToObject(body, "allow_internet_access", cJSON_IsTrue(opt));
			else
				expect = "must be a boolean";
		} else if (!strcmp(k, "network")) {
			if (cJSON_IsObject(opt))
				e2bw_add(body, "network", cJSON_Duplicate(opt, 1));
			else
				expect = "must be an object (E2B's network settings)";
		} else {
			expect =
				"is not an option of this provider (auto_pause, auto_resume, allow_internet_access, network)";
		}
		if (expect) {
			char field[160];
			snprintf(field, sizeof field, "options.%s", k);
			cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: '%s' %s", field,
				expect);
			return e2bw_error_set_str(e, "field", field);
		}
	}
	return NULL;
}

void e2bw_sandbox_create(e2bw_core *core, e2bw_call *call)
{
	const char *tpl = e2bw_call_param_str(call, "template");
	const cJSON *timeout = e2bw_call_param_num(call, "timeout");
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(call->params, "metadata");
	const cJSON *envs = cJSON_GetObjectItemCaseSensitive(call->params, "envs");
	const cJSON *secure = cJSON_GetObjectItemCaseSensitive(call->params, "secure");
	const cJSON *options = cJSON_GetObjectItemCaseSensitive(call->params, "options");
	int v1 = cJSON_IsFalse(secure); /* only the v1 route can create a sandbox without an envd token */

	cJSON *body = cJSON_CreateObject();
	if (!body) {
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	cJSON_AddStringToObject(body, "templateID", tpl ? tpl : "base");
	if (timeout)
		cJSON_AddNumberToObject(body, "timeout", whole_seconds(timeout->valuedouble));
	/* This create's own key (the host's clock to the microsecond and a
   * counter), so a lost answer can be recovered: see create_lost. */
	char key[64];
	snprintf(key, sizeof key, "%.3f-%u", core->now, (unsigned)core->next_op_id + 1);
	cJSON *meta = cJSON_IsObject(metadata) ? cJSON_Duplicate(metadata, 1) : cJSON_CreateObject();
	cJSON_AddStringToObject(meta, E2BW_CREATE_KEY, key);
	e2bw_add(body, "metadata", meta);
	call->scratch = cJSON_CreateObject();
	cJSON_AddStringToObject(call->scratch, "key", key);
	if (cJSON_IsObject(envs))
		e2bw_add(body, "envVars", cJSON_Duplicate(envs, 1));
	if (v1)
		cJSON_AddBoolToObject(body, "secure", 0);
	/* Resources a backend may apply (E2B's templates fix them; the local
   * backend honours them); the record reports what the sandbox really got. */
	static const char *const resources[][2] = {{"cpu", "cpuCount"}, {"memory", "memoryMB"},
		{"disk", "diskSizeMB"}};
	for (int i = 0; i < 3; i++) {
		const cJSON *r = e2bw_call_param_num(call, resources[i][0]);
		if (r)
			cJSON_AddNumberToObject(body, resources[i][1], r->valuedouble);
	}
	if (cJSON_IsObject(options)) {
		cJSON *error = apply_options(body, options);
		if (error) {
			cJSON_Delete(body);
			e2bw_call_fail(core, call, error);
			return;
		}
	}
	e2bw_http_op *op =
		e2bw_api_request(core, call, "POST", v1 ? "/sandboxes" : "/v2/sandboxes", body, created);
	if (op)
		op->on_fail = create_lost;
	cJSON_Delete(body);
}
