/* process.c — commands and terminals over envd's process.Process service
 * (docs/e2b-protocol-notes.md, "Process service"): the handlers of exec.run,
 * exec.start, process.* and pty.*. Start and Connect answers are streams,
 * followed by the stream engine (stream.h); the other calls are unary. */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "json_add.h"
#include "methods.h"
#include "params.h"
#include "process.h"
#include "stream.h"
#include "stream_open.h"

/* exec.run's timeout when none is given (as the E2B SDK). */
#define DEFAULT_RUN_TIMEOUT_S 60.0

/* --- small helpers ---------------------------------------------------------- */

/* --- requests -------------------------------------------------------------------- */

/* StartRequest for a shell command line (as the E2B SDK runs commands). */
static cJSON *start_message(const e2bw_call *call, int with_stdin, const cJSON *pty)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON *process = cJSON_AddObjectToObject(msg, "process");
	const cJSON *envs = e2bw_call_param(call, "envs");
	const char *cwd = e2bw_call_param_str(call, "cwd");
	if (pty) {
		cJSON_AddStringToObject(process, "cmd", "/bin/bash");
		cJSON *args = cJSON_AddArrayToObject(process, "args");
		e2bw_push(args, cJSON_CreateString("-i"));
		e2bw_push(args, cJSON_CreateString("-l"));
		cJSON *e = cJSON_AddObjectToObject(process, "envs");
		cJSON_AddStringToObject(e, "TERM", "xterm-256color");
		cJSON_AddStringToObject(e, "LANG", "C.UTF-8");
		cJSON_AddStringToObject(e, "LC_ALL", "C.UTF-8");
		const cJSON *kv;
		cJSON_ArrayForEach(kv, envs) {
			cJSON_DeleteItemFromObjectCaseSensitive(e, kv->string);
			cJSON_AddStringToObject(e, kv->string, kv->valuestring);
		}
		e2bw_add(msg, "pty", cJSON_Duplicate(pty, 1));
	} else {
		cJSON_AddStringToObject(process, "cmd", "/bin/bash");
		cJSON *args = cJSON_AddArrayToObject(process, "args");
		e2bw_push(args, cJSON_CreateString("-l"));
		e2bw_push(args, cJSON_CreateString("-c"));
		e2bw_push(args, cJSON_CreateString(e2bw_call_param_str(call, "command")));
		if (cJSON_IsObject(envs))
			e2bw_add(process, "envs", cJSON_Duplicate(envs, 1));
	}
	if (cwd)
		cJSON_AddStringToObject(process, "cwd", cwd);
	const char *tag = e2bw_call_param_str(call, "tag");
	if (tag)
		cJSON_AddStringToObject(msg, "tag", tag);
	cJSON_AddBoolToObject(msg, "stdin", with_stdin);
	return msg;
}

static double param_seconds(const e2bw_call *call, const char *name, double fallback)
{
	const cJSON *v = e2bw_call_param(call, name);
	return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

static void run_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *msg = start_message(call, cJSON_IsString(e2bw_call_param(call, "stdin")), NULL);
	double timeout = param_seconds(call, "timeout", DEFAULT_RUN_TIMEOUT_S);
	e2bw_stream_open(core, call, STREAM_RUN, "process.Process/Start", msg,
		timeout > 0 ? timeout : DEFAULT_RUN_TIMEOUT_S);
}

static void start_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *msg = start_message(call, cJSON_IsTrue(e2bw_call_param(call, "stdin")), NULL);
	e2bw_stream_open(core, call, STREAM_START, "process.Process/Start", msg,
		param_seconds(call, "timeout", 0));
}

static void pty_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *pty = cJSON_CreateObject();
	cJSON *size = cJSON_AddObjectToObject(pty, "size");
	cJSON_AddNumberToObject(size, "cols", e2bw_call_param(call, "cols")->valuedouble);
	cJSON_AddNumberToObject(size, "rows", e2bw_call_param(call, "rows")->valuedouble);
	cJSON *msg = start_message(call, 1, pty);
	cJSON_Delete(pty);
	e2bw_stream_open(core, call, STREAM_START, "process.Process/Start", msg,
		param_seconds(call, "timeout", 0));
}

static void attach_go(e2bw_core *core, e2bw_call *call)
{
	e2bw_stream_open(core, call, STREAM_ATTACH, "process.Process/Connect",
		e2bw_process_selector(e2bw_param_pid(call->params, "pid")), 0);
}

void e2bw_exec_run(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, run_go);
}
void e2bw_exec_start(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, start_go);
}
void e2bw_pty_open(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, pty_go);
}
void e2bw_process_attach(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, attach_go);
}

/* --- unary process calls ------------------------------------------------------------ */

/* The answer's JSON object, or NULL after failing the call. */
static cJSON *unary_answer(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (op->status != 200) {
		cJSON *error = e2bw_envd_status_error(op, e2bw_call_param_str(call, "sandbox_id"));
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, error);
		return NULL;
	}
	cJSON *json = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	if (!cJSON_IsObject(json)) {
		cJSON_Delete(json);
		cJSON *e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
			"envd sent an invalid answer to %s: expected a JSON object", op->what);
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, e);
		return NULL;
	}
	e2bw_http_op_finish(core, op);
	return json;
}

/* For answers with nothing to read ({}): the call, or NULL after failing it. */
static e2bw_call *unary_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *answer = unary_answer(core, op);
	if (!answer)
		return NULL;
	cJSON_Delete(answer);
	return call;
}

static cJSON *pid_result(const e2bw_call *call)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "sandbox_id", e2bw_call_param_str(call, "sandbox_id"));
	cJSON_AddNumberToObject(r, "pid", e2bw_param_pid(call->params, "pid"));
	return r;
}

/* process.list */
static void listed(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *answer = unary_answer(core, op);
	if (!answer)
		return;
	cJSON *r = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(r, "processes");
	const cJSON *p;
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(answer, "processes")) {
		const cJSON *config = cJSON_GetObjectItemCaseSensitive(p, "config");
		cJSON *entry = cJSON_CreateObject();
		cJSON_AddNumberToObject(entry, "pid", e2bw_param_pid(p, "pid"));
		const cJSON *tag = cJSON_GetObjectItemCaseSensitive(p, "tag");
		if (cJSON_IsString(tag))
			cJSON_AddStringToObject(entry, "tag", tag->valuestring);
		const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(config, "cmd");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(config, "args");
		const cJSON *envs = cJSON_GetObjectItemCaseSensitive(config, "envs");
		const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(config, "cwd");
		cJSON_AddStringToObject(entry, "cmd", cJSON_IsString(cmd) ? cmd->valuestring : "");
		e2bw_add(entry, "args", cJSON_IsArray(args) ? cJSON_Duplicate(args, 1) : cJSON_CreateArray());
		e2bw_add(entry, "envs",
			cJSON_IsObject(envs) ? cJSON_Duplicate(envs, 1) : cJSON_CreateObject());
		if (cJSON_IsString(cwd))
			cJSON_AddStringToObject(entry, "cwd", cwd->valuestring);
		e2bw_push(list, entry);
	}
	cJSON_Delete(answer);
	e2bw_call_succeed(core, call, r);
}

static void list_go(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_unary(core, call, "process.Process/List", cJSON_CreateObject(), NULL, listed);
}
void e2bw_process_list(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, list_go);
}

/* process.kill, process.signal, pty.close: SendSignal */
static void signalled(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = unary_done(core, op);
	if (!call)
		return;
	cJSON *r = pid_result(call);
	const char *sig = call->method->start == e2bw_process_signal
		? e2bw_param_signal(e2bw_call_param(call, "signal"))
		: "SIGNAL_SIGKILL";
	cJSON_AddStringToObject(r, "signal", sig + 7); /* "SIGNAL_SIGKILL" → "SIGKILL" */
	e2bw_call_succeed(core, call, r);
}

static void signal_go(e2bw_core *core, e2bw_call *call)
{
	const char *sig = call->method->start == e2bw_process_signal
		? e2bw_param_signal(e2bw_call_param(call, "signal"))
		: "SIGNAL_SIGKILL";
	cJSON *msg = e2bw_process_selector(e2bw_param_pid(call->params, "pid"));
	cJSON_AddStringToObject(msg, "signal", sig);
	e2bw_envd_unary(core, call, "process.Process/SendSignal", msg, NULL, signalled);
}

void e2bw_process_kill(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, signal_go);
}
void e2bw_process_signal(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, signal_go);
}
void e2bw_pty_close(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, signal_go);
}

/* process.stdin and pty.input: SendInput (then CloseStdin when asked) */
enum {
	STDIN_WRITE = 1,
	STDIN_CLOSE
};

static void stdin_step(e2bw_core *core, e2bw_http_op *op);

static void stdin_close(e2bw_core *core, e2bw_call *call)
{
	call->step = STDIN_CLOSE;
	e2bw_envd_unary(core, call, "process.Process/CloseStdin",
		e2bw_process_selector(e2bw_param_pid(call->params, "pid")), NULL, stdin_step);
}

static void stdin_step(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = unary_done(core, op);
	if (!call)
		return;
	if (call->step == STDIN_WRITE && cJSON_IsTrue(e2bw_call_param(call, "close"))) {
		stdin_close(core, call);
		return;
	}
	cJSON *r = pid_result(call);
	const cJSON *written = cJSON_GetObjectItemCaseSensitive(call->scratch, "written");
	cJSON_AddNumberToObject(r, "written", cJSON_IsNumber(written) ? written->valuedouble : 0);
	if (call->method->start == e2bw_process_stdin)
		cJSON_AddBoolToObject(r, "closed", cJSON_IsTrue(e2bw_call_param(call, "close")));
	e2bw_call_succeed(core, call, r);
}

static void input_go(e2bw_core *core, e2bw_call *call)
{
	const cJSON *data = e2bw_call_param(call, "data");
	if (!cJSON_IsString(data)) { /* process.stdin with only close */
		if (cJSON_IsTrue(e2bw_call_param(call, "close")))
			stdin_close(core, call);
		else
			e2bw_call_fail(core, call,
				e2bw_error_set_str(e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
							   "Invalid params: give 'data', 'close' or both"),
					"field", "data"));
		return;
	}
	e2bw_buf bytes = {0}, b64 = {0};
	int rc = 0;
	if (e2bw_param_base64(call->params)) {
		rc = e2bw_base64_decode(&bytes, data->valuestring, strlen(data->valuestring));
		if (rc == -2) {
			e2bw_buf_free(&bytes);
			e2bw_call_fail(core, call,
				e2bw_error_set_str(e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
							   "Invalid params: 'data' is not base64"),
					"field", "data"));
			return;
		}
	} else {
		rc = e2bw_buf_append_str(&bytes, data->valuestring);
	}
	rc |= e2bw_base64_encode(&b64, (const uint8_t *)bytes.data, bytes.len);
	call->scratch = cJSON_CreateObject();
	cJSON *msg = rc || !call->scratch ? NULL : e2bw_process_selector(e2bw_param_pid(call->params, "pid"));
	if (msg) {
		cJSON_AddNumberToObject(call->scratch, "written", (double)bytes.len);
		int is_pty = call->method->start == e2bw_pty_input;
		cJSON_AddStringToObject(cJSON_AddObjectToObject(msg, "input"), is_pty ? "pty" : "stdin",
			b64.data ? b64.data : "");
	}
	e2bw_buf_free(&bytes);
	e2bw_buf_free(&b64);
	call->step = STDIN_WRITE;
	e2bw_envd_unary(core, call, "process.Process/SendInput", msg, NULL, stdin_step);
}

void e2bw_process_stdin(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, input_go);
}
void e2bw_pty_input(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, input_go);
}

/* pty.resize: Update */
static void resized(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = unary_done(core, op);
	if (!call)
		return;
	cJSON *r = pid_result(call);
	cJSON_AddNumberToObject(r, "cols", e2bw_call_param(call, "cols")->valuedouble);
	cJSON_AddNumberToObject(r, "rows", e2bw_call_param(call, "rows")->valuedouble);
	e2bw_call_succeed(core, call, r);
}

static void resize_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *msg = e2bw_process_selector(e2bw_param_pid(call->params, "pid"));
	cJSON *size = cJSON_AddObjectToObject(cJSON_AddObjectToObject(msg, "pty"), "size");
	cJSON_AddNumberToObject(size, "cols", e2bw_call_param(call, "cols")->valuedouble);
	cJSON_AddNumberToObject(size, "rows", e2bw_call_param(call, "rows")->valuedouble);
	e2bw_envd_unary(core, call, "process.Process/Update", msg, NULL, resized);
}

void e2bw_pty_resize(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, resize_go);
}
