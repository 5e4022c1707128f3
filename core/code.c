/* code.c — E2B's code interpreter (docs/code-interpreter.md): code.run and
 * code.context.*, optional methods, over the HTTP API that the server of a
 * code-interpreter template answers on port 49999 of its sandbox, called
 * as the official @e2b/code-interpreter SDK calls it. code.run follows
 * POST /execute's stream of JSON lines into E2B's Execution, with a
 * code.output notification for each output as it comes. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "code.h"
#include "envd.h"
#include "errors.h"
#include "json_add.h"
#include "methods.h"
#include "ndjson.h"
#include "stream.h"
#include "timers.h"
#include "url.h"

#define CODE_PORT "49999"
/* code.run's timeout when none is given (the SDK's timeoutMs). */
#define CODE_DEFAULT_TIMEOUT_S 60.0
/* The server sends a keepalive line every 5 s while a cell is silent: six
 * missed ones and the connection counts as dead. */
#define CODE_IDLE_MS 30000.0
#define CODE_MAX_LINE (16u * 1024u * 1024u)

static const char *sandbox_of(const e2bw_call *call)
{
	return e2bw_call_param_str(call, "sandbox_id");
}

static void fail_oom(e2bw_core *core, e2bw_call *call)
{
	e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
}

/* POST|GET|DELETE <server><path> with the SDK's headers (the envd token only
 * for /execute, as the SDK sends it). The server is the configured
 * sandbox_url, routed by header (the SDK's getSandboxDirectUrl), else
 * https://49999-<id>.<domain>. NULL after failing the call. */
static e2bw_http_op *code_request(e2bw_core *core, e2bw_call *call, const char *method, const char *path,
	const cJSON *body, e2bw_http_done_fn done)
{
	const char *id = sandbox_of(call);
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, id);
	e2bw_buf url = {0};
	int rc = core->config.sandbox_url ? e2bw_envd_base_url(core, id, &url)
					  : e2bw_buf_append_str(&url, "https://" CODE_PORT "-") ||
			e2bw_buf_append_str(&url, id) || e2bw_buf_append_char(&url, '.') ||
			e2bw_buf_append_str(&url, info && info->domain ? info->domain : core->config.domain);
	rc |= e2bw_buf_append_str(&url, path);
	const char *headers[12];
	int h = 0;
	headers[h++] = "Content-Type", headers[h++] = "application/json";
	headers[h++] = "E2b-Sandbox-Id", headers[h++] = id;
	headers[h++] = "E2b-Sandbox-Port", headers[h++] = CODE_PORT;
	if (info && info->traffic_token)
		headers[h++] = "E2B-Traffic-Access-Token", headers[h++] = info->traffic_token;
	if (info && info->token && !strcmp(path, "/execute"))
		headers[h++] = "X-Access-Token", headers[h++] = info->token;
	headers[h] = NULL;
	e2bw_http_op *op = NULL;
	if (rc)
		fail_oom(core, call);
	else
		op = e2bw_call_request(core, call, method, url.data, path, headers, body, done);
	e2bw_buf_free(&url);
	return op;
}

/* The typed error for a non-2xx answer: the server's (E2B's: plain text),
 * or the sandbox proxy's. */
static cJSON *code_status_error(const e2bw_http_op *op, const char *id)
{
	if (op->status == 502 && op->body.len && strstr(op->body.data, "\"port\"")) {
		cJSON *e = e2bw_error_new(E2BW_ERR_UNAVAILABLE,
			"No code interpreter answers on port " CODE_PORT
			" of sandbox '%s': its template has none "
			"(E2B's is code-interpreter-v1)",
			id);
		return e2bw_error_set_num(e2bw_error_set_num(e, "http_status", 502), "port", 49999);
	}
	if (op->status == 502)
		return e2bw_envd_status_error(op, id);
	e2bw_error_kind kind = op->status == 404 ? E2BW_ERR_NOT_FOUND
		: op->status == 400              ? E2BW_ERR_INVALID_ARGUMENT
						 : e2bw_error_kind_for_status(op->status);
	cJSON *e = e2bw_error_new(kind, "The code interpreter answered %s with HTTP %d: %.300s", op->what,
		op->status, op->body.len ? op->body.data : "");
	if (kind == E2BW_ERR_NOT_FOUND)
		e2bw_error_set_str(e, "sdk_code", E2BW_SDK_IN_SANDBOX_NOT_FOUND);
	return e2bw_error_set_num(e, "http_status", op->status);
}

/* Keeps the start of an error answer's body (as text) for its message. */
static void keep_error_body(e2bw_http_op *op, const uint8_t *data, size_t len)
{
	if (op->body.len < 1024)
		e2bw_buf_append(&op->body, data, len < 1024 ? len : 1024);
}

/* --- code.run ------------------------------------------------------------------- */

/* The run's reading state (its op's owner); the Execution is the call's scratch. */
typedef struct code_run {
	e2bw_ndjson lines;
	e2bw_call *call;
	size_t logged; /* bytes of stdout and stderr kept */
	int ended;     /* end_of_execution came */
	int oversized; /* a line longer than CODE_MAX_LINE came (and was dropped) */
} code_run;

static void run_free(void *owner)
{
	code_run *r = owner;
	e2bw_ndjson_free(&r->lines);
	free(r);
}

static void notify_output(e2bw_core *core, e2bw_call *call, const char *stream, const char *key, cJSON *value)
{
	cJSON *p = cJSON_CreateObject();
	e2bw_add(p, "request_id", cJSON_Duplicate(call->id, 1));
	cJSON_AddStringToObject(p, "sandbox_id", sandbox_of(call));
	cJSON_AddStringToObject(p, "stream", stream);
	e2bw_add(p, key, value);
	e2bw_notify(core, "code.output", p, 0);
}

/* One line of the stream into the Execution (E2B's parseOutput). */
static void run_line(void *ctx, const char *text, size_t len)
{
	e2bw_http_op *op = ctx;
	code_run *r = op->owner;
	e2bw_core *core = op->core;
	cJSON *exec = r->call->scratch;
	r->oversized |= !text;
	cJSON *line = text && !r->ended ? cJSON_ParseWithLength(text, len) : NULL;
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(line, "type");
	const char *t = cJSON_IsString(type) ? type->valuestring : "";
	if (!strcmp(t, "stdout") || !strcmp(t, "stderr")) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(line, "text");
		const char *s = cJSON_IsString(v) ? v->valuestring : "";
		size_t n = strlen(s);
		if (r->logged + n <= E2BW_MAX_RUN_OUTPUT)
			e2bw_push(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(exec,
									   "logs"),
					  t),
				cJSON_CreateString(s));
		else if (!cJSON_HasObjectItem(exec, "truncated"))
			cJSON_AddTrueToObject(exec, "truncated");
		r->logged += n;
		notify_output(core, r->call, t, "text", cJSON_CreateString(s));
	} else if (!strcmp(t, "result")) {
		cJSON_DeleteItemFromObjectCaseSensitive(line, "type");
		e2bw_push(cJSON_GetObjectItemCaseSensitive(exec, "results"), cJSON_Duplicate(line, 1));
		notify_output(core, r->call, "result", "result", cJSON_Duplicate(line, 1));
	} else if (!strcmp(t, "error")) {
		cJSON_DeleteItemFromObjectCaseSensitive(line, "type");
		cJSON_ReplaceItemInObjectCaseSensitive(exec, "error", cJSON_Duplicate(line, 1));
		notify_output(core, r->call, "error", "error", cJSON_Duplicate(line, 1));
	} else if (!strcmp(t, "number_of_executions")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(line, "execution_count");
		if (cJSON_IsNumber(n))
			cJSON_ReplaceItemInObjectCaseSensitive(exec, "execution_count",
				cJSON_CreateNumber(n->valuedouble));
	} else if (!strcmp(t, "end_of_execution")) {
		r->ended = 1;
	} /* keepalive, and anything newer, only show that the server lives */
	cJSON_Delete(line);
}

/* After lines were read: the answer once end_of_execution came, or the
 * failure that ends the run. A line cut short by memory would make the
 * Execution partial: never a success (its allocations span many chunks). */
static void run_settle(e2bw_core *core, code_run *r, int eof)
{
	e2bw_call *call = r->call;
	if (e2bw_alloc_failures() != core->alloc_mark) {
		fail_oom(core, call);
	} else if (r->oversized) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "An output of the code is larger than %u MiB",
				CODE_MAX_LINE >> 20));
	} else if (r->ended) {
		cJSON *exec = call->scratch;
		call->scratch = NULL;
		e2bw_call_succeed(core, call, exec);
	} else if (eof) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The code interpreter ended its answer without end_of_execution"));
	}
}

static void run_data(e2bw_core *core, e2bw_http_op *op, const uint8_t *data, size_t len)
{
	code_run *r = op->owner;
	if (op->status != 200) {
		keep_error_body(op, data, len);
		return;
	}
	e2bw_ndjson_feed(&r->lines, (const char *)data, len, run_line, op); /* out of memory: settled below */
	run_settle(core, r, 0);
}

static void run_done(e2bw_core *core, e2bw_http_op *op)
{
	code_run *r = op->owner;
	e2bw_call *call = r->call;
	if (op->status != 200) {
		cJSON *e = code_status_error(op, sandbox_of(call));
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, e);
		return;
	}
	e2bw_ndjson_finish(&r->lines, run_line, op);
	op->owner = NULL; /* the response is over: no cancel for it */
	op->owner_free = NULL;
	e2bw_http_op_finish(core, op);
	run_settle(core, r, 1);
	run_free(r);
}

/* Past the timeout the request is cancelled: the server sees its client
 * go and interrupts the kernel (as when the SDK's timeoutMs aborts). */
static void run_timed_out(e2bw_core *core, void *arg)
{
	e2bw_call *call = arg;
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(call->params, "timeout");
	e2bw_call_fail(core, call,
		e2bw_error_new(E2BW_ERR_TIMEOUT,
			"The code did not finish within its timeout of %g s; it was interrupted",
			cJSON_IsNumber(t) ? t->valuedouble : CODE_DEFAULT_TIMEOUT_S));
}

static void stop_clock(e2bw_core *core, void *call)
{
	e2bw_timer_cancel(core, call);
}

static void run_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "code", e2bw_call_param_str(call, "code"));
	const char *names[][2] = {{"context_id", "context_id"}, {"language", "language"},
		{"envs", "env_vars"}};
	for (size_t i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(call->params, names[i][0]);
		if (v && !cJSON_IsNull(v))
			e2bw_add(body, names[i][1], cJSON_Duplicate(v, 1));
	}
	cJSON *exec = cJSON_CreateObject();
	cJSON_AddArrayToObject(exec, "results");
	cJSON *logs = cJSON_AddObjectToObject(exec, "logs");
	cJSON_AddArrayToObject(logs, "stdout");
	cJSON_AddArrayToObject(logs, "stderr");
	cJSON_AddNullToObject(exec, "error");
	cJSON_AddNullToObject(exec, "execution_count");
	call->scratch = exec;
	code_run *r = calloc(1, sizeof *r);
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(call->params, "timeout");
	double timeout = cJSON_IsNumber(t) ? t->valuedouble : CODE_DEFAULT_TIMEOUT_S;
	if (!r || !cJSON_GetObjectItemCaseSensitive(logs, "stderr") ||
		(timeout > 0 && e2bw_timer_start(core, core->now + timeout * 1000.0, run_timed_out, call))) {
		free(r);
		cJSON_Delete(body);
		fail_oom(core, call);
		return;
	}
	call->teardown = stop_clock;
	call->teardown_arg = call;
	r->call = call;
	e2bw_ndjson_init(&r->lines, CODE_MAX_LINE);
	e2bw_http_op *op = code_request(core, call, "POST", "/execute", body, run_done);
	cJSON_Delete(body);
	if (!op) {
		run_free(r);
		return;
	}
	op->owner = r;
	op->owner_free = run_free;
	op->on_data = run_data;
	op->idle_ms = CODE_IDLE_MS;
}

void e2bw_code_run(e2bw_core *core, e2bw_call *call)
{
	if (e2bw_call_param_str(call, "context_id") && e2bw_call_param_str(call, "language")) {
		e2bw_call_fail(core, call,
			e2bw_error_set_str(
				e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
					"Invalid params: give 'context_id' or 'language', not both"),
				"field", "language"));
		return;
	}
	e2bw_envd_ensure(core, call, run_go);
}

/* --- code.context.* ---------------------------------------------------------------- */

/* A context answer: the JSON the server sent (an object, or for list an
 * array under "contexts"); restart and remove say what they did. */
static void context_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *m = call->method->name;
	if (op->status != 200) {
		cJSON *e = code_status_error(op, sandbox_of(call));
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, e);
		return;
	}
	int listing = !strcmp(m, "code.context.list"), created = !strcmp(m, "code.context.create");
	cJSON *body = listing || created ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	e2bw_http_op_finish(core, op);
	if ((listing && !cJSON_IsArray(body)) || (created && !cJSON_IsObject(body))) {
		cJSON_Delete(body);
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The code interpreter sent an invalid answer to %s", m));
		return;
	}
	cJSON *result = created ? body : cJSON_CreateObject();
	if (listing)
		e2bw_add(result, "contexts", body);
	if (!listing && !created) {
		cJSON_AddStringToObject(result, "context_id", e2bw_call_param_str(call, "context_id"));
		cJSON_AddTrueToObject(result, strcmp(m, "code.context.remove") ? "restarted" : "removed");
	}
	e2bw_call_succeed(core, call, result);
}

static void context_go(e2bw_core *core, e2bw_call *call)
{
	const char *m = call->method->name + strlen("code.context.");
	if (!strcmp(m, "list")) {
		code_request(core, call, "GET", "/contexts", NULL, context_done);
		return;
	}
	if (!strcmp(m, "create")) {
		cJSON *body = cJSON_CreateObject();
		const char *language = e2bw_call_param_str(call, "language"),
			   *cwd = e2bw_call_param_str(call, "cwd");
		if (language)
			cJSON_AddStringToObject(body, "language", language);
		if (cwd)
			cJSON_AddStringToObject(body, "cwd", cwd);
		if (body)
			code_request(core, call, "POST", "/contexts", body, context_done);
		else
			fail_oom(core, call);
		cJSON_Delete(body);
		return;
	}
	e2bw_buf path = {0};
	int rc = e2bw_buf_append_str(&path, "/contexts/") ||
		e2bw_url_encode_str(&path, e2bw_call_param_str(call, "context_id"));
	if (!strcmp(m, "restart"))
		rc |= e2bw_buf_append_str(&path, "/restart");
	if (rc)
		fail_oom(core, call);
	else
		code_request(core, call, strcmp(m, "remove") ? "POST" : "DELETE", path.data, NULL,
			context_done);
	e2bw_buf_free(&path);
}

void e2bw_code_context(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, context_go);
}
