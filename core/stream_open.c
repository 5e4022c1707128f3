/* stream_open.c — opening a stream for a call (stream.h): exec.run,
 * exec.start, pty.open and process.attach (through e2bw_stream_open), the
 * internal runs of files.chmod, and files.watch's WatchDir streams. */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "params.h"
#include "jsonrpc.h"
#include "methods.h"
#include "stream.h"
#include "stream_open.h"
#include "stream_read.h"

/* envd's own kill (Connect-Timeout-Ms) comes this long after ours: a backstop. */
#define LIFETIME_GRACE_MS 5000.0

/* --- small helpers ---------------------------------------------------------- */

static char *dup_str(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *p = malloc(n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static void fail_oom(e2bw_core *core, e2bw_call *call)
{
	e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
}

/* A new stream for the call, registered but not yet sent: the caller may
 * set more fields, then stream_send. NULL after failing the call. */
static e2bw_stream *stream_new(e2bw_core *core, e2bw_call *call, int kind, double timeout_s, const char *user,
	int base64)
{
	e2bw_stream *s = calloc(1, sizeof *s);
	char *id_text = e2bw_rpc_id_text(call->id);
	if (!s || !id_text) {
		free(s);
		free(id_text);
		fail_oom(core, call);
		return NULL;
	}
	s->kind = kind;
	s->request_id = id_text;
	s->sandbox_id = dup_str(e2bw_call_param_str(call, "sandbox_id"));
	s->user = dup_str(user);
	s->base64 = base64;
	s->timeout_s = timeout_s;
	s->deadline = timeout_s > 0 ? core->now + timeout_s * 1000.0 : -1;
	e2bw_env_decoder_init(&s->dec);
	const cJSON *input = e2bw_call_param(call, "stdin");
	if (kind == STREAM_RUN && cJSON_IsString(input)) {
		s->has_stdin = 1;
		if (s->base64)
			e2bw_base64_decode(&s->stdin_data, input->valuestring, strlen(input->valuestring));
		else
			e2bw_buf_append_str(&s->stdin_data, input->valuestring);
	}
	s->next = core->streams;
	core->streams = s;
	e2bw_stream_attach(s, call);
	return s;
}

/* Sends the stream's request (takes message). */
static void stream_send(e2bw_core *core, e2bw_stream *s, const char *rpc, cJSON *message)
{
	if (!s->sandbox_id || !message) {
		cJSON_Delete(message);
		e2bw_stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	e2bw_envd_req req = {s->sandbox_id, rpc, message, s->user, 1,
		s->timeout_s > 0 ? s->timeout_s * 1000.0 + LIFETIME_GRACE_MS : -1,
		s->call->request_timeout_ms};
	s->op = e2bw_envd_request(core, &req);
	cJSON_Delete(message);
	if (!s->op) {
		e2bw_stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	s->op->owner = s;
	s->op->on_data = e2bw_stream_data;
	s->op->on_done = e2bw_stream_done;
	s->op->on_fail = e2bw_stream_fail;
	s->op->idle_ms = E2BW_STREAM_IDLE_INTERVALS * core->config.keepalive_interval_ms;
}

/* Starts a Start or Connect stream for the call, as the call's user. */
void e2bw_stream_open(e2bw_core *core, e2bw_call *call, int kind, const char *rpc, cJSON *message,
	double timeout_s)
{
	e2bw_stream *s = stream_new(core, call, kind, timeout_s, e2bw_call_param_str(call, "user"),
		e2bw_param_base64(call->params));
	if (!s) {
		cJSON_Delete(message);
		return;
	}
	stream_send(core, s, rpc, message);
}

void e2bw_run_internal(e2bw_core *core, e2bw_call *call, cJSON *start_message, const char *user,
	double timeout_s, e2bw_run_done_fn done)
{
	e2bw_stream *s = stream_new(core, call, STREAM_RUN, timeout_s, user, 0);
	if (!s) {
		cJSON_Delete(start_message);
		return;
	}
	s->run_done = done;
	stream_send(core, s, "process.Process/Start", start_message);
}

void e2bw_watch_open(e2bw_core *core, e2bw_call *call, cJSON *watch_message, const char *user,
	const char *dir, double watch_number)
{
	e2bw_stream *s = stream_new(core, call, STREAM_WATCH, 0, user, 0);
	if (!s) {
		cJSON_Delete(watch_message);
		return;
	}
	s->pid = watch_number;
	/* keepalives keep the stream alive, but the start event must come within
   * the call's request timeout (no lifetime: timeout_s stays 0) */
	s->deadline = core->now + call->request_timeout_ms;
	s->watch_dir = dup_str(dir);
	if (!s->watch_dir) {
		cJSON_Delete(watch_message);
		e2bw_stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	stream_send(core, s, "filesystem.Filesystem/WatchDir", watch_message);
}

int e2bw_watch_close(e2bw_core *core, const char *sandbox_id, double watch_number)
{
	for (e2bw_stream *s = core->streams; s; s = s->next) {
		if (s->kind != STREAM_WATCH || s->pid != watch_number ||
			strcmp(s->sandbox_id, sandbox_id) != 0 || s->call)
			continue;
		e2bw_stream_notify_exit(core, s, NULL);
		e2bw_stream_free(core, s);
		return 1;
	}
	return 0;
}
