/* stream.c — the stream engine's lifecycle (stream.h): registering a stream
 * with its call (the call's teardown hook), the one ending of every stream
 * (the call's answer, or exec.exit / files.watch_end), the command's own
 * clock, and shutdown. Liveness: every stream's op has an idle deadline of
 * E2BW_STREAM_IDLE_INTERVALS keepalive intervals (http_ops.c); a command's
 * own timeout is enforced here, not only by envd. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "files_watch_events.h"
#include "json_add.h"

const char *const e2bw_stream_out_names[OUT__COUNT] = {"stdout", "stderr", "pty"};

/* {"process":{"pid":N}} — envd's ProcessSelector. */
cJSON *e2bw_process_selector(double pid)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON *process = cJSON_AddObjectToObject(msg, "process");
	cJSON_AddNumberToObject(process, "pid", pid);
	return msg;
}

/* Go's os.ProcessState strings ("signal: killed") → signal names. */
static const struct {
	const char *go;
	const char *name;
	int number;
} go_signals[] = {
	{"killed", "SIGKILL", 9},
	{"terminated", "SIGTERM", 15},
	{"interrupt", "SIGINT", 2},
	{"hangup", "SIGHUP", 1},
	{"quit", "SIGQUIT", 3},
	{"aborted", "SIGABRT", 6},
	{"broken pipe", "SIGPIPE", 13},
	{"segmentation fault", "SIGSEGV", 11},
	{"alarm clock", "SIGALRM", 14},
	{"user defined signal 1", "SIGUSR1", 10},
	{"user defined signal 2", "SIGUSR2", 12},
	{"floating point exception", "SIGFPE", 8},
	{"bus error", "SIGBUS", 7},
	{"illegal instruction", "SIGILL", 4},
	{"trace/breakpoint trap", "SIGTRAP", 5},
};

/* Adds exit_code, signal, status, error from envd's end event. A death by
 * signal reports the shell's convention, 128 + n, with the signal's name. */
static void add_exit(cJSON *out, const cJSON *end)
{
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(end, "exitCode");
	if (!code)
		code = cJSON_GetObjectItemCaseSensitive(end, "exit_code");
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(end, "status");
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(end, "error");
	double exit_code = cJSON_IsNumber(code) ? code->valuedouble : 0;
	const char *signal = NULL;
	const char *st = cJSON_IsString(status) ? status->valuestring : "";
	if (strncmp(st, "signal: ", 8) == 0) {
		for (size_t i = 0; i < sizeof go_signals / sizeof go_signals[0]; i++)
			if (strncmp(st + 8, go_signals[i].go, strlen(go_signals[i].go)) == 0) {
				signal = go_signals[i].name;
				exit_code = 128 + go_signals[i].number;
			}
	}
	cJSON_AddNumberToObject(out, "exit_code", exit_code);
	if (signal)
		cJSON_AddStringToObject(out, "signal", signal);
	else
		cJSON_AddNullToObject(out, "signal");
	cJSON_AddStringToObject(out, "status", st);
	if (cJSON_IsString(error) && error->valuestring[0])
		cJSON_AddStringToObject(out, "error", error->valuestring);
	else
		cJSON_AddNullToObject(out, "error");
}

/* --- lifecycle ---------------------------------------------------------- */

static void stream_unlink(e2bw_core *core, e2bw_stream *s)
{
	for (e2bw_stream **p = &core->streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			return;
		}
}

/* Frees the stream; an op still running is cancelled. */
void e2bw_stream_free(e2bw_core *core, e2bw_stream *s)
{
	stream_unlink(core, s);
	if (s->op) {
		uint32_t id = s->op->id;
		e2bw_http_op_finish(core, s->op);
		if (!s->wire_done)
			e2bw_emit_cancel(core, id);
	}
	e2bw_stream_detach(s); /* the call no longer has a stream to tear down */
	free(s->request_id);
	free(s->sandbox_id);
	free(s->user);
	free(s->watch_dir);
	e2bw_env_decoder_free(&s->dec);
	cJSON_Delete(s->end);
	e2bw_buf_free(&s->run_out[0]);
	e2bw_buf_free(&s->run_out[1]);
	e2bw_buf_free(&s->bytes);
	e2bw_buf_free(&s->stdin_data);
	free(s);
}

/* kill after a timeout, stdin for exec.run */
e2bw_http_op *e2bw_stream_oneway(e2bw_core *core, const char *sandbox_id, const char *rpc, cJSON *message)
{
	e2bw_envd_req req = {sandbox_id, rpc, message, NULL, 0, -1, core->config.request_timeout_ms};
	e2bw_http_op *op = message ? e2bw_envd_request(core, &req) : NULL;
	cJSON_Delete(message);
	return op;
}

static void kill_process(e2bw_core *core, const char *sandbox_id, double pid)
{
	if (pid <= 0)
		return;
	cJSON *msg = e2bw_process_selector(pid);
	cJSON_AddStringToObject(msg, "signal", "SIGNAL_SIGKILL");
	e2bw_stream_oneway(core, sandbox_id, "process.Process/SendSignal", msg);
}

/* {"jsonrpc":"2.0","method":"exec.exit","params":{...}} for a stream that
 * was followed by notifications. failure: the error that ended it instead
 * of the process (taken), or NULL. */
void e2bw_stream_notify_exit(e2bw_core *core, e2bw_stream *s, cJSON *failure)
{
	if (s->kind == STREAM_WATCH) {
		if (failure)
			e2bw_redact(core, failure);
		e2bw_notify(core, "files.watch_end",
			e2bw_watch_end_params(s->request_id, s->sandbox_id, s->pid, failure), 1);
		return;
	}
	cJSON *params = cJSON_CreateObject();
	cJSON_AddStringToObject(params, "sandbox_id", s->sandbox_id);
	cJSON_AddNumberToObject(params, "pid", s->pid);
	e2bw_add(params, "request_id", cJSON_CreateRaw(s->request_id));
	if (s->end && !failure) {
		add_exit(params, s->end);
	} else {
		cJSON_AddNullToObject(params, "exit_code");
		cJSON_AddNullToObject(params, "signal");
		cJSON_AddNullToObject(params, "status");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(failure, "message");
		cJSON_AddStringToObject(params, "error",
			cJSON_IsString(msg) ? msg->valuestring
					    : "the stream ended without the process's end");
	}
	if (s->timed_out)
		cJSON_AddBoolToObject(params, "timed_out", 1);
	if (failure) {
		e2bw_redact(core, failure);
		e2bw_add(params, "failure", failure);
	}
	e2bw_notify(core, "exec.exit", params, 1);
}

/* Ends the stream with an error: the waiting call fails with it, or (once
 * answered) the host gets exec.exit carrying it. Takes error. */
void e2bw_stream_error(e2bw_core *core, e2bw_stream *s, cJSON *error)
{
	if (s->call) {
		e2bw_call *call = e2bw_stream_detach(s);
		if (s->kind == STREAM_RUN && s->pid > 0)
			kill_process(core, s->sandbox_id, s->pid); /* exec.run: no orphan */
		e2bw_stream_free(core, s);
		e2bw_call_fail(core, call, error);
		return;
	}
	e2bw_stream_notify_exit(core, s, error);
	e2bw_stream_free(core, s);
}

/* exec.run's result: exit data plus the collected output. */
static cJSON *run_result(e2bw_stream *s)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "sandbox_id", s->sandbox_id);
	cJSON_AddNumberToObject(r, "pid", s->pid);
	add_exit(r, s->end);
	for (int i = 0; i < 2; i++) {
		/* Written straight from the bytes as a JSON string (UTF-8 made valid,
     * or base64), then attached raw so nothing is escaped twice. */
		const uint8_t *p = (const uint8_t *)s->run_out[i].data;
		size_t n = s->run_out[i].len;
		e2bw_buf text = {0};
		int rc = e2bw_buf_append_char(&text, '"');
		rc |= s->base64 ? e2bw_base64_encode(&text, p, n) : e2bw_json_text(&text, NULL, p, n, 1);
		rc |= e2bw_buf_append_char(&text, '"');
		cJSON *item = rc ? NULL : cJSON_CreateRaw(text.data);
		e2bw_buf_free(&text);
		if (!item ||
			!e2bw_add(r, e2bw_stream_out_names[i],
				item)) { /* never a result without its output */
			cJSON_Delete(r);
			return NULL;
		}
	}
	cJSON_AddStringToObject(r, "encoding", s->base64 ? "base64" : "utf8");
	if (s->dropped[0] || s->dropped[1]) {
		cJSON *t = cJSON_AddObjectToObject(r, "truncated");
		cJSON_AddNumberToObject(t, "stdout", (double)s->dropped[0]);
		cJSON_AddNumberToObject(t, "stderr", (double)s->dropped[1]);
	}
	return r;
}

/* The end-stream frame arrived without an error. */
void e2bw_stream_complete(e2bw_core *core, e2bw_stream *s)
{
	if (s->kind == STREAM_WATCH) { /* only unwatch ends a watch: envd stopping is a failure */
		e2bw_stream_error(core, s,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd ended the watch of '%.300s' on its own",
				s->watch_dir));
		return;
	}
	if (!s->end) {
		e2bw_stream_error(core, s,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"envd ended the stream of process %.0f without its end event", s->pid));
		return;
	}
	if (s->kind == STREAM_RUN && s->call) {
		e2bw_call *call = e2bw_stream_detach(s);
		cJSON *result = run_result(s);
		e2bw_run_done_fn done = s->run_done;
		e2bw_stream_free(core, s);
		if (done)
			done(core, call, result);
		else
			e2bw_call_succeed(core, call, result);
		return;
	}
	e2bw_stream_notify_exit(core, s, NULL);
	e2bw_stream_free(core, s);
}

/* The call's teardown hook: the call is answered another way (or freed),
 * so no answer from here. */
static void stream_abandon(e2bw_core *core, void *stream)
{
	e2bw_stream *s = stream;
	e2bw_stream_detach(s);
	if (s->kind == STREAM_RUN)
		kill_process(core, s->sandbox_id, s->pid);
	e2bw_stream_free(core, s);
}

void e2bw_stream_attach(e2bw_stream *s, e2bw_call *call)
{
	s->call = call;
	call->teardown = stream_abandon;
	call->teardown_arg = s;
}

e2bw_call *e2bw_stream_detach(e2bw_stream *s)
{
	e2bw_call *call = s->call;
	if (call) {
		call->teardown = NULL;
		call->teardown_arg = NULL;
	}
	s->call = NULL;
	return call;
}

/* --- the command clock ---------------------------------------------------------- */

double e2bw_streams_next_deadline(const e2bw_core *core)
{
	double best = -1;
	for (const e2bw_stream *s = core->streams; s; s = s->next)
		if (s->deadline >= 0 && (best < 0 || s->deadline < best))
			best = s->deadline;
	return best;
}

void e2bw_streams_tick(e2bw_core *core)
{
	for (;;) {
		e2bw_stream *late = NULL;
		for (e2bw_stream *s = core->streams; s && !late; s = s->next)
			if (s->deadline >= 0 && s->deadline <= core->now)
				late = s;
		if (!late)
			return;
		late->deadline = -1;
		if (late->kind == STREAM_WATCH) { /* only armed until the start event: no process to kill */
			if (late->call)
				e2bw_stream_error(core, late,
					e2bw_error_new(E2BW_ERR_TIMEOUT,
						"envd did not start watching '%.300s' within %g s (request_timeout)",
						late->watch_dir, late->call->request_timeout_ms / 1000.0));
			continue;
		}
		late->timed_out = 1;
		kill_process(core, late->sandbox_id, late->pid);
		if (late->kind == STREAM_RUN) {
			cJSON *e = e2bw_error_new(E2BW_ERR_TIMEOUT,
				"The command did not finish within its timeout of %g s; it was killed",
				late->timeout_s);
			if (late->pid > 0)
				e2bw_error_set_num(e, "pid", late->pid);
			late->pid = 0; /* killed already */
			e2bw_stream_error(core, late, e);
		} else if (late->call) { /* not even started within its lifetime */
			e2bw_stream_error(core, late,
				e2bw_error_new(E2BW_ERR_TIMEOUT,
					"The process did not start within its timeout of %g s",
					late->timeout_s));
		}
		/* exec.start / pty: the stream goes on and reports the kill in exec.exit */
	}
}

void e2bw_streams_cancel_all(e2bw_core *core)
{
	while (core->streams) {
		e2bw_stream *s = core->streams;
		if (s->call) {
			stream_abandon(core, s); /* its call is answered by the caller */
			continue;
		}
		if (s->kind == STREAM_WATCH)
			e2bw_stream_notify_exit(core, s,
				e2bw_error_new(E2BW_ERR_CANCELED,
					"Stopped watching: the provider is shutting down"));
		else
			e2bw_stream_notify_exit(core, s,
				e2bw_error_new(E2BW_ERR_CANCELED,
					"Stopped following process %.0f: the provider is shutting down (the process keeps running)",
					s->pid));
		e2bw_stream_free(core, s);
	}
}

void e2bw_streams_free(e2bw_core *core)
{
	while (core->streams) {
		e2bw_stream *s = core->streams;
		if (s->op) { /* no actions are read after free: just drop it */
			e2bw_http_op_finish(core, s->op);
			s->op = NULL;
		}
		e2bw_stream_free(core, s);
	}
}
