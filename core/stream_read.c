/* stream_read.c — reading a stream (stream.h): Connect envelopes, decoded
 * incrementally, become events; events become an exec.run result, exec.output
 * / exec.exit notifications, or files.watch answers and files.event. The hot
 * path (a data event) is recognised without building a JSON tree. */
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "files_watch_events.h"
#include "params.h"
#include "stream.h"
#include "stream_read.h"

/* An envd error answer is kept up to this size for its message. */
#define ERROR_BODY_MAX (64u * 1024u)

/* --- events ----------------------------------------------------------------------- */

/* Returns 1 when the stream is over (s is freed). */
static int on_start(e2bw_core *core, e2bw_stream *s, const cJSON *start)
{
	double pid = e2bw_param_pid(start, "pid");
	if (pid <= 0) {
		e2bw_stream_error(core, s,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's start event has no valid pid"));
		return 1;
	}
	s->pid = pid;
	if (s->kind == STREAM_RUN) {
		if (s->has_stdin) { /* the input, then end of input (pipelined, in order) */
			cJSON *msg = e2bw_process_selector(pid);
			e2bw_buf b64 = {0};
			e2bw_base64_encode(&b64, (const uint8_t *)s->stdin_data.data, s->stdin_data.len);
			cJSON_AddStringToObject(cJSON_AddObjectToObject(msg, "input"), "stdin",
				b64.data ? b64.data : "");
			e2bw_buf_free(&b64);
			e2bw_stream_oneway(core, s->sandbox_id, "process.Process/SendInput", msg);
			e2bw_stream_oneway(core, s->sandbox_id, "process.Process/CloseStdin",
				e2bw_process_selector(pid));
		}
		return 0;
	}
	if (s->call) { /* exec.start / pty.open / process.attach: answered now */
		e2bw_call *call = e2bw_stream_detach(s);
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "sandbox_id", s->sandbox_id);
		cJSON_AddNumberToObject(r, "pid", pid);
		e2bw_call_succeed_streaming(core, call, r);
	}
	return 0;
}

/* Appends v in decimal: the numbers of the hot path, without printf. */
static int append_decimal(e2bw_buf *b, unsigned long long v)
{
	char digits[20];
	size_t i = sizeof digits;
	do
		digits[--i] = (char)('0' + v % 10);
	while (v /= 10);
	return e2bw_buf_append(b, digits + i, sizeof digits - i);
}

/* exec.output, built by hand: it is the hot path, and the data is written
 * straight from raw bytes to JSON text in one pass. */
static void notify_output(e2bw_core *core, e2bw_stream *s, int which, const uint8_t *p, size_t n)
{
	e2bw_buf m = {0};
	/* Sized once for the usual case (plain text, or base64), not grown by
   * doubling from 64 bytes: that was a dozen reallocations per chunk. */
	size_t data_room = s->base64 ? (n + 2) / 3 * 4 : n;
	/* Detached (e2bw.h): the data goes to its own buffer, unescaped. */
	int detach = core->detach_min && n >= core->detach_min;
	e2bw_buf value = {0}, *data = detach ? &value : &m;
	int rc = (detach && e2bw_buf_reserve(&value, data_room + 1)) ||
		e2bw_buf_reserve(&m,
			(detach ? 0 : data_room) + strlen(s->sandbox_id) + strlen(s->request_id) + 256) ||
		e2bw_buf_append_str(&m,
			"{\"jsonrpc\":\"2.0\",\"method\":\"exec.output\",\"params\":{\"sandbox_id\":") ||
		e2bw_json_quoted(&m, s->sandbox_id, strlen(s->sandbox_id)) ||
		e2bw_buf_append_str(&m, ",\"pid\":") ||
		append_decimal(&m, s->pid > 0 ? (unsigned long long)s->pid : 0) ||
		e2bw_buf_append_str(&m, ",\"request_id\":") || e2bw_buf_append_str(&m, s->request_id) ||
		e2bw_buf_append_str(&m, ",\"stream\":\"") ||
		e2bw_buf_append_str(&m, e2bw_stream_out_names[which]) ||
		e2bw_buf_append_str(&m, "\",\"offset\":") ||
		append_decimal(&m, (unsigned long long)s->offset[which]) ||
		e2bw_buf_append_str(&m, ",\"length\":") || append_decimal(&m, (unsigned long long)n) ||
		e2bw_buf_append_str(&m, ",\"data\":\"");
	if (s->base64)
		rc |= e2bw_base64_encode(data, p, n) ||
			e2bw_buf_append_str(&m, "\",\"encoding\":\"base64\"}}");
	else if (detach)
		rc |= e2bw_utf8_text(data, &s->carry[which], p, n, 0) || e2bw_buf_append_str(&m, "\"}}");
	else
		rc |= e2bw_json_text(data, &s->carry[which], p, n, 0) || e2bw_buf_append_str(&m, "\"}}");
	if (rc) {
		e2bw_buf_free(&m);
		e2bw_buf_free(&value);
		return; /* out of memory: the chunk is lost, offsets show the gap */
	}
	size_t len, value_len;
	char *text = e2bw_buf_take(&m, &len);
	if (!detach)
		e2bw_emit_text_len(core, E2BW_MESSAGE_NOTIFICATION, text, len);
	else {
		char *v = e2bw_buf_take(&value, &value_len);
		e2bw_emit_detached(core, E2BW_MESSAGE_NOTIFICATION, text, len, E2BW_DETACHED_DATA, v,
			value_len);
	}
}

/* Hands the decoded chunk in s->bytes to exec.run's buffers or the host. */
static int deliver(e2bw_core *core, e2bw_stream *s, int which)
{
	const uint8_t *p = (const uint8_t *)s->bytes.data;
	size_t n = s->bytes.len;
	if (s->kind == STREAM_RUN) {
		int i = which == OUT_STDERR ? 1 : 0;
		size_t room = E2BW_MAX_RUN_OUTPUT - s->run_out[i].len;
		size_t keep = n < room ? n : room;
		if (keep && e2bw_buf_append(&s->run_out[i], p, keep) != 0)
			return -1;
		s->dropped[i] += n - keep;
	} else if (n) {
		notify_output(core, s, which, p, n);
	}
	s->offset[which] += n;
	return 0;
}

/* One output chunk: base64 text of stream `which`. */
static int on_output(e2bw_core *core, e2bw_stream *s, int which, const char *b64, size_t b64_len)
{
	e2bw_buf_reset(&s->bytes);
	if (e2bw_base64_decode(&s->bytes, b64, b64_len) != 0)
		return -1;
	return deliver(core, s, which);
}

static int on_data(e2bw_core *core, e2bw_stream *s, const cJSON *data)
{
	for (int i = 0; i < OUT__COUNT; i++) {
		const cJSON *field = cJSON_GetObjectItemCaseSensitive(data, e2bw_stream_out_names[i]);
		if (!field)
			continue;
		if (!cJSON_IsString(field))
			return -1;
		return on_output(core, s, i, field->valuestring, strlen(field->valuestring));
	}
	return 0; /* nothing we know: ignore, as protobuf readers do */
}

/* The hot path: a data event is {"event":{"data":{"<stream>":"<base64>"}}}
 * (any whitespace). Recognised here without building a JSON tree; anything
 * else — other events, escapes, extra fields — goes the general way.
 * Returns the stream index and the base64 span, or -1. */
static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static const char *expect(const char *p, const char *end, const char *token)
{
	p = skip_ws(p, end);
	size_t n = strlen(token);
	if ((size_t)(end - p) < n || memcmp(p, token, n) != 0)
		return NULL;
	return p + n;
}

static int fast_data_event(const uint8_t *data, size_t len, const char **b64, size_t *b64_len)
{
	const char *p = (const char *)data, *end = p + len;
	if (!(p = expect(p, end, "{")) || !(p = expect(p, end, "\"event\"")) || !(p = expect(p, end, ":")) ||
		!(p = expect(p, end, "{")) || !(p = expect(p, end, "\"data\"")) ||
		!(p = expect(p, end, ":")) || !(p = expect(p, end, "{")))
		return -1;
	static const char *const quoted_names[OUT__COUNT] = {"\"stdout\"", "\"stderr\"", "\"pty\""};
	int which = -1;
	for (int i = 0; i < OUT__COUNT && which < 0; i++) {
		const char *q = expect(p, end, quoted_names[i]);
		if (q) {
			which = i;
			p = q;
		}
	}
	if (which < 0 || !(p = expect(p, end, ":")) || !(p = expect(p, end, "\"")))
		return -1;
	*b64 = p;
	*b64_len = (size_t)(end - p); /* the decoder finds where the base64 ends */
	return which;
}

/* Decodes the base64 of a fast-path data event and checks that the frame
 * ends as it must ("}}} after the string). 0 when done, 1 when the frame is
 * not of the simple shape after all (nothing was consumed), -1 on garbage. */
static int fast_output(e2bw_core *core, e2bw_stream *s, int which, const char *b64, size_t room)
{
	const char *end = b64 + room;
	size_t used;
	e2bw_buf_reset(&s->bytes);
	int rc = e2bw_base64_decode_run(&s->bytes, b64, room, &used);
	if (rc == -1)
		return -1;
	const char *p = b64 + used;
	if (rc != 0 || p == end || *p != '"')
		return 1; /* escapes or odd text: the general way */
	p++;
	if (!(p = expect(p, end, "}")) || !(p = expect(p, end, "}")) || !(p = expect(p, end, "}")) ||
		skip_ws(p, end) != end)
		return 1;
	return deliver(core, s, which);
}

/* files.watch: {"start":{}} answers the call with the watch id, then each
 * {"filesystem":{...}} becomes a files.event. Returns 1 when s is freed. */
static int on_watch_event(e2bw_core *core, e2bw_stream *s, const cJSON *event)
{
	const cJSON *item;
	if (cJSON_GetObjectItemCaseSensitive(event, "start")) {
		if (!s->call)
			return 0; /* a repeated start changes nothing */
		s->deadline = -1;
		e2bw_call *call = e2bw_stream_detach(s);
		e2bw_call_succeed_streaming(core, call,
			e2bw_watch_started(s->sandbox_id, s->pid, s->watch_dir));
	} else if ((item = cJSON_GetObjectItemCaseSensitive(event, "filesystem"))) {
		if (s->call) {
			e2bw_stream_error(core, s,
				e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
					"envd's watch did not begin with a start event"));
			return 1;
		}
		cJSON *params =
			e2bw_watch_event_params(s->request_id, s->sandbox_id, s->pid, s->watch_dir, item);
		if (params)
			e2bw_notify(core, "files.event", params, 0);
	} /* keepalive and unknown events: consumed, never surfaced */
	return 0;
}

/* Handles one frame. Returns 1 when the stream is over (s is freed). */
static int on_frame(e2bw_core *core, e2bw_stream *s, const e2bw_env_frame *f)
{
	const char *b64;
	size_t b64_len;
	int which;
	if (!(f->flags & E2BW_ENV_FLAG_END_STREAM) && s->kind != STREAM_WATCH && s->pid > 0 &&
		(which = fast_data_event(f->data, f->len, &b64, &b64_len)) >= 0) {
		int rc = fast_output(core, s, which, b64, b64_len);
		if (rc == 0)
			return 0;
		if (rc < 0) {
			e2bw_stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
			return 1;
		}
	}
	cJSON *msg = cJSON_ParseWithLength((const char *)f->data, f->len);
	if (!cJSON_IsObject(msg)) {
		cJSON_Delete(msg);
		e2bw_stream_error(core, s,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"envd sent a frame that is not a JSON object on %s",
				s->op ? s->op->what : "a stream"));
		return 1;
	}
	if (f->flags & E2BW_ENV_FLAG_END_STREAM) {
		s->wire_done = 1;
		cJSON *error = cJSON_GetObjectItemCaseSensitive(msg, "error");
		e2bw_redact(core, error); /* before its message is cut to length */
		if (error)
			e2bw_stream_error(core, s, e2bw_connect_error(error, s->op ? s->op->what : "stream"));
		else
			e2bw_stream_complete(core, s);
		cJSON_Delete(msg);
		return 1;
	}
	const cJSON *event = cJSON_GetObjectItemCaseSensitive(msg, "event");
	const cJSON *item;
	int over = 0;
	/* WatchDirResponse: the oneof at top level (docs/e2b-protocol-notes.md,
   * "Filesystem service") */
	if (s->kind == STREAM_WATCH) {
		over = on_watch_event(core, s, msg);
		cJSON_Delete(msg);
		return over;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(event, "start"))) {
		if (s->pid > 0) { /* a second start is a broken stream */
			e2bw_stream_error(core, s,
				e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent a second start event"));
			over = 1;
		} else {
			over = on_start(core, s, item);
		}
	} else if (s->pid <= 0 && !cJSON_GetObjectItemCaseSensitive(event, "keepalive")) {
		e2bw_stream_error(core, s,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"envd's stream did not begin with a start event"));
		over = 1;
	} else if ((item = cJSON_GetObjectItemCaseSensitive(event, "data"))) {
		if (on_data(core, s, item) != 0) {
			e2bw_stream_error(core, s,
				e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent output that is not base64"));
			over = 1;
		}
	} else if ((item = cJSON_GetObjectItemCaseSensitive(event, "end"))) {
		cJSON_Delete(s->end);
		s->end = cJSON_Duplicate(item, 1);
	} /* keepalive and unknown events: consumed, never surfaced */
	cJSON_Delete(msg);
	return over;
}

void e2bw_stream_data(e2bw_core *core, e2bw_http_op *op, const uint8_t *data, size_t len)
{
	e2bw_stream *s = op->owner;
	if (op->status != 200) { /* an error answer: keep it for the message */
		size_t room = ERROR_BODY_MAX > op->body.len ? ERROR_BODY_MAX - op->body.len : 0;
		e2bw_buf_append(&op->body, data, len < room ? len : room);
		return;
	}
	while (len) {
		size_t used;
		e2bw_env_frame frame;
		e2bw_env_status st = e2bw_env_decode(&s->dec, data, len, &used, &frame);
		data += used;
		len -= used;
		if (st == E2BW_ENV_FRAME) {
			if (on_frame(core, s, &frame))
				return;
		} else if (st < 0) {
			e2bw_stream_error(core, s,
				e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent %s at byte %llu of %s",
					e2bw_env_strerror(st), (unsigned long long)s->dec.offset, op->what));
			return;
		}
	}
}

/* The HTTP answer ended before the end-stream frame. */
void e2bw_stream_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_stream *s = op->owner;
	cJSON *error;
	if (op->status != 200)
		error = e2bw_envd_status_error(op, s->sandbox_id);
	else if (!e2bw_env_decoder_at_boundary(&s->dec))
		error = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
			"envd's stream %s was cut in the middle of a frame", op->what);
	else
		error = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
			"envd's stream %s ended without an end-of-stream frame", op->what);
	e2bw_http_op_finish(core, op);
	s->op = NULL;
	e2bw_stream_error(core, s, error);
}

void e2bw_stream_fail(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_stream *s = op->owner;
	s->op = NULL; /* the transport layer frees it */
	e2bw_stream_error(core, s, error);
}
