/* process.c — commands and terminals over envd's process.Process service
 * (reference §4): exec.run, exec.start, process.*, pty.*.
 *
 * A Start or Connect answer is a stream of Connect envelopes: start, data…,
 * end, then the end-stream frame. One e2bw_stream follows it: it decodes the
 * envelopes incrementally, turns events into an exec.run result or into
 * exec.output / exec.exit notifications, and guarantees exactly one ending:
 * the call's answer (exec.run; or exec.start before its start event) or one
 * exec.exit, whatever the backend does. Liveness: every stream has an idle
 * deadline of E2BW_STREAM_IDLE_INTERVALS keepalive intervals (http_ops.c),
 * and a command's own timeout is enforced here, not only by envd. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "envd.h"
#include "envelope.h"
#include "errors.h"
#include "files.h"
#include "json_text.h"
#include "jsonrpc.h"
#include "methods.h"

enum stream_kind { STREAM_RUN, STREAM_START, STREAM_ATTACH, STREAM_WATCH };
enum { OUT_STDOUT, OUT_STDERR, OUT_PTY, OUT__COUNT };
static const char *const out_names[OUT__COUNT] = {"stdout", "stderr", "pty"};

/* exec.run keeps at most this much of each stream (the rest is counted). */
#ifndef E2BW_MAX_RUN_OUTPUT
#define E2BW_MAX_RUN_OUTPUT (32u * 1024u * 1024u)
#endif
/* An envd error answer is kept up to this size for its message. */
#define ERROR_BODY_MAX (64u * 1024u)
/* envd's own kill (Connect-Timeout-Ms) comes this long after ours: a backstop. */
#define LIFETIME_GRACE_MS 5000.0
/* exec.run's timeout when none is given (as the E2B SDK). */
#define DEFAULT_RUN_TIMEOUT_S 60.0

struct e2bw_stream {
  int kind;
  e2bw_call *call;            /* the call still to answer, or NULL */
  e2bw_http_op *op;           /* the Start/Connect answer, or NULL once over */
  char *request_id;           /* JSON text of the originating request's id */
  char *sandbox_id;
  char *user;
  double pid;                 /* 0 until the start event */
  int base64;                 /* output as exact bytes */
  e2bw_env_decoder dec;
  cJSON *end;                 /* the end event, once seen */
  uint64_t offset[OUT__COUNT];
  e2bw_utf8_carry carry[OUT__COUNT];
  e2bw_buf run_out[2];        /* exec.run: stdout, stderr */
  uint64_t dropped[2];        /* exec.run: bytes past E2BW_MAX_RUN_OUTPUT */
  e2bw_buf bytes;             /* scratch: one decoded data event */
  double deadline;            /* the command's own timeout, or -1 */
  double timeout_s;
  int timed_out;
  int wire_done;              /* the end-stream frame came: nothing to cancel */
  e2bw_buf stdin_data;        /* exec.run: input to send after start */
  int has_stdin;
  e2bw_run_done_fn run_done;  /* internal run (files.chmod): gets the result */
  char *watch_dir;            /* files.watch: the watched directory */
  e2bw_stream *next;
};

/* --- small helpers ---------------------------------------------------------- */

static const cJSON *param(const e2bw_call *call, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(call->params, name);
}

static const char *param_str(const e2bw_call *call, const char *name) {
  const cJSON *v = param(call, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *dup_str(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static void fail_oom(e2bw_core *core, e2bw_call *call) {
  e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
}

/* {"process":{"pid":N}} — envd's ProcessSelector. */
static cJSON *selector(double pid) {
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
    {"killed", "SIGKILL", 9},   {"terminated", "SIGTERM", 15}, {"interrupt", "SIGINT", 2},
    {"hangup", "SIGHUP", 1},    {"quit", "SIGQUIT", 3},        {"aborted", "SIGABRT", 6},
    {"broken pipe", "SIGPIPE", 13}, {"segmentation fault", "SIGSEGV", 11}, {"alarm clock", "SIGALRM", 14},
    {"user defined signal 1", "SIGUSR1", 10}, {"user defined signal 2", "SIGUSR2", 12},
    {"floating point exception", "SIGFPE", 8}, {"bus error", "SIGBUS", 7}, {"illegal instruction", "SIGILL", 4},
    {"trace/breakpoint trap", "SIGTRAP", 5},
};

/* Adds exit_code, signal, status, error from envd's end event. A death by
 * signal reports the shell's convention, 128 + n, with the signal's name. */
static void add_exit(cJSON *out, const cJSON *end) {
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(end, "exitCode");
  if (!code) code = cJSON_GetObjectItemCaseSensitive(end, "exit_code");
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
  if (signal) cJSON_AddStringToObject(out, "signal", signal);
  else cJSON_AddNullToObject(out, "signal");
  cJSON_AddStringToObject(out, "status", st);
  if (cJSON_IsString(error) && error->valuestring[0]) cJSON_AddStringToObject(out, "error", error->valuestring);
  else cJSON_AddNullToObject(out, "error");
}

/* --- stream lifecycle ---------------------------------------------------------- */

static void stream_unlink(e2bw_core *core, e2bw_stream *s) {
  for (e2bw_stream **p = &core->streams; *p; p = &(*p)->next)
    if (*p == s) {
      *p = s->next;
      return;
    }
}

/* Frees the stream; an op still running is cancelled. */
static void stream_free(e2bw_core *core, e2bw_stream *s) {
  stream_unlink(core, s);
  if (s->op) {
    uint32_t id = s->op->id;
    e2bw_http_op_finish(core, s->op);
    if (!s->wire_done) e2bw_emit_cancel(core, id);
  }
  if (s->call) s->call->stream = NULL; /* the call no longer has a stream to tear down */
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

/* A fire-and-forget unary envd call (kill after a timeout, stdin for
 * exec.run): its outcome is not anybody's answer. */
static e2bw_http_op *envd_oneway(e2bw_core *core, const char *sandbox_id, const char *rpc, cJSON *message) {
  e2bw_envd_req req = {sandbox_id, rpc, message, NULL, 0, -1, core->config.request_timeout_ms};
  e2bw_http_op *op = message ? e2bw_envd_request(core, &req) : NULL;
  cJSON_Delete(message);
  return op;
}

static void kill_process(e2bw_core *core, const char *sandbox_id, double pid) {
  if (pid <= 0) return;
  cJSON *msg = selector(pid);
  cJSON_AddStringToObject(msg, "signal", "SIGNAL_SIGKILL");
  envd_oneway(core, sandbox_id, "process.Process/SendSignal", msg);
}

/* {"jsonrpc":"2.0","method":"exec.exit","params":{...}} for a stream that
 * was followed by notifications. failure: the error that ended it instead
 * of the process (taken), or NULL. */
static void notify_exit(e2bw_core *core, e2bw_stream *s, cJSON *failure) {
  if (s->kind == STREAM_WATCH) {
    if (failure) e2bw_redact(core, failure);
    e2bw_notify(core, "files.watch_end", e2bw_watch_end_params(s->request_id, s->sandbox_id, s->pid, failure));
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
    cJSON_AddStringToObject(params, "error", cJSON_IsString(msg) ? msg->valuestring : "the stream ended without the process's end");
  }
  if (s->timed_out) cJSON_AddBoolToObject(params, "timed_out", 1);
  if (failure) {
    e2bw_redact(core, failure);
    e2bw_add(params, "failure", failure);
  }
  e2bw_notify(core, "exec.exit", params);
}

/* Ends the stream with an error: the waiting call fails with it, or (once
 * answered) the host gets exec.exit carrying it. Takes error. */
static void stream_error(e2bw_core *core, e2bw_stream *s, cJSON *error) {
  if (s->call) {
    e2bw_call *call = s->call;
    call->stream = NULL;
    s->call = NULL;
    if (s->kind == STREAM_RUN && s->pid > 0) kill_process(core, s->sandbox_id, s->pid); /* exec.run: no orphan */
    stream_free(core, s);
    e2bw_call_fail(core, call, error);
    return;
  }
  notify_exit(core, s, error);
  stream_free(core, s);
}

/* exec.run's result: exit data plus the collected output. */
static cJSON *run_result(e2bw_stream *s) {
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
    if (!item || !e2bw_add(r, out_names[i], item)) { /* never a result without its output */
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
static void stream_complete(e2bw_core *core, e2bw_stream *s) {
  if (s->kind == STREAM_WATCH) { /* only unwatch ends a watch: envd stopping is a failure */
    stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd ended the watch of '%.300s' on its own", s->watch_dir));
    return;
  }
  if (!s->end) {
    stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd ended the stream of process %.0f without its end event", s->pid));
    return;
  }
  if (s->kind == STREAM_RUN && s->call) {
    e2bw_call *call = s->call;
    call->stream = NULL;
    s->call = NULL;
    cJSON *result = run_result(s);
    e2bw_run_done_fn done = s->run_done;
    stream_free(core, s);
    if (done) done(core, call, result);
    else e2bw_call_succeed(core, call, result);
    return;
  }
  notify_exit(core, s, NULL);
  stream_free(core, s);
}

/* --- events ----------------------------------------------------------------------- */

/* Returns 1 when the stream is over (s is freed). */
static int on_start(e2bw_core *core, e2bw_stream *s, const cJSON *start) {
  double pid = e2bw_param_pid(start, "pid");
  if (pid <= 0) {
    stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's start event has no valid pid"));
    return 1;
  }
  s->pid = pid;
  if (s->kind == STREAM_RUN) {
    if (s->has_stdin) { /* the input, then end of input (pipelined, in order) */
      cJSON *msg = selector(pid);
      e2bw_buf b64 = {0};
      e2bw_base64_encode(&b64, (const uint8_t *)s->stdin_data.data, s->stdin_data.len);
      cJSON_AddStringToObject(cJSON_AddObjectToObject(msg, "input"), "stdin", b64.data ? b64.data : "");
      e2bw_buf_free(&b64);
      envd_oneway(core, s->sandbox_id, "process.Process/SendInput", msg);
      envd_oneway(core, s->sandbox_id, "process.Process/CloseStdin", selector(pid));
    }
    return 0;
  }
  if (s->call) { /* exec.start / pty.open / process.attach: answered now */
    e2bw_call *call = s->call;
    call->stream = NULL;
    s->call = NULL;
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "sandbox_id", s->sandbox_id);
    cJSON_AddNumberToObject(r, "pid", pid);
    e2bw_call_succeed(core, call, r);
  }
  return 0;
}

/* Appends v in decimal: the numbers of the hot path, without printf. */
static int append_decimal(e2bw_buf *b, unsigned long long v) {
  char digits[20];
  size_t i = sizeof digits;
  do digits[--i] = (char)('0' + v % 10);
  while (v /= 10);
  return e2bw_buf_append(b, digits + i, sizeof digits - i);
}

/* exec.output, built by hand: it is the hot path, and the data is written
 * straight from raw bytes to JSON text in one pass. */
static void notify_output(e2bw_core *core, e2bw_stream *s, int which, const uint8_t *p, size_t n) {
  e2bw_buf m = {0};
  /* Sized once for the usual case (plain text, or base64), not grown by
   * doubling from 64 bytes: that was a dozen reallocations per chunk. */
  size_t data_room = s->base64 ? (n + 2) / 3 * 4 : n;
  int rc = e2bw_buf_reserve(&m, data_room + strlen(s->sandbox_id) + strlen(s->request_id) + 256) ||
           e2bw_buf_append_str(&m, "{\"jsonrpc\":\"2.0\",\"method\":\"exec.output\",\"params\":{\"sandbox_id\":") ||
           e2bw_json_quoted(&m, s->sandbox_id, strlen(s->sandbox_id)) || e2bw_buf_append_str(&m, ",\"pid\":") ||
           append_decimal(&m, s->pid > 0 ? (unsigned long long)s->pid : 0) || e2bw_buf_append_str(&m, ",\"request_id\":") ||
           e2bw_buf_append_str(&m, s->request_id) || e2bw_buf_append_str(&m, ",\"stream\":\"") ||
           e2bw_buf_append_str(&m, out_names[which]) || e2bw_buf_append_str(&m, "\",\"offset\":") ||
           append_decimal(&m, (unsigned long long)s->offset[which]) || e2bw_buf_append_str(&m, ",\"length\":") ||
           append_decimal(&m, (unsigned long long)n) || e2bw_buf_append_str(&m, ",\"data\":\"");
  if (s->base64) rc |= e2bw_base64_encode(&m, p, n) || e2bw_buf_append_str(&m, "\",\"encoding\":\"base64\"}}");
  else rc |= e2bw_json_text(&m, &s->carry[which], p, n, 0) || e2bw_buf_append_str(&m, "\"}}");
  if (rc) {
    e2bw_buf_free(&m);
    return; /* out of memory: the chunk is lost, offsets show the gap */
  }
  size_t len;
  char *text = e2bw_buf_take(&m, &len);
  e2bw_emit_text_len(core, text, len);
}

/* Hands the decoded chunk in s->bytes to exec.run's buffers or the host. */
static int deliver(e2bw_core *core, e2bw_stream *s, int which) {
  const uint8_t *p = (const uint8_t *)s->bytes.data;
  size_t n = s->bytes.len;
  if (s->kind == STREAM_RUN) {
    int i = which == OUT_STDERR ? 1 : 0;
    size_t room = E2BW_MAX_RUN_OUTPUT - s->run_out[i].len;
    size_t keep = n < room ? n : room;
    if (keep && e2bw_buf_append(&s->run_out[i], p, keep) != 0) return -1;
    s->dropped[i] += n - keep;
  } else if (n) {
    notify_output(core, s, which, p, n);
  }
  s->offset[which] += n;
  return 0;
}

/* One output chunk: base64 text of stream `which`. */
static int on_output(e2bw_core *core, e2bw_stream *s, int which, const char *b64, size_t b64_len) {
  e2bw_buf_reset(&s->bytes);
  if (e2bw_base64_decode(&s->bytes, b64, b64_len) != 0) return -1;
  return deliver(core, s, which);
}

static int on_data(e2bw_core *core, e2bw_stream *s, const cJSON *data) {
  for (int i = 0; i < OUT__COUNT; i++) {
    const cJSON *field = cJSON_GetObjectItemCaseSensitive(data, out_names[i]);
    if (!field) continue;
    if (!cJSON_IsString(field)) return -1;
    return on_output(core, s, i, field->valuestring, strlen(field->valuestring));
  }
  return 0; /* nothing we know: ignore, as protobuf readers do */
}

/* The hot path: a data event is {"event":{"data":{"<stream>":"<base64>"}}}
 * (any whitespace). Recognised here without building a JSON tree; anything
 * else — other events, escapes, extra fields — goes the general way.
 * Returns the stream index and the base64 span, or -1. */
static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static const char *expect(const char *p, const char *end, const char *token) {
  p = skip_ws(p, end);
  size_t n = strlen(token);
  if ((size_t)(end - p) < n || memcmp(p, token, n) != 0) return NULL;
  return p + n;
}

static int fast_data_event(const uint8_t *data, size_t len, const char **b64, size_t *b64_len) {
  const char *p = (const char *)data, *end = p + len;
  if (!(p = expect(p, end, "{")) || !(p = expect(p, end, "\"event\"")) || !(p = expect(p, end, ":")) ||
      !(p = expect(p, end, "{")) || !(p = expect(p, end, "\"data\"")) || !(p = expect(p, end, ":")) || !(p = expect(p, end, "{")))
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
  if (which < 0 || !(p = expect(p, end, ":")) || !(p = expect(p, end, "\""))) return -1;
  *b64 = p;
  *b64_len = (size_t)(end - p); /* the decoder finds where the base64 ends */
  return which;
}

/* Decodes the base64 of a fast-path data event and checks that the frame
 * ends as it must ("}}} after the string). 0 when done, 1 when the frame is
 * not of the simple shape after all (nothing was consumed), -1 on garbage. */
static int fast_output(e2bw_core *core, e2bw_stream *s, int which, const char *b64, size_t room) {
  const char *end = b64 + room;
  size_t used;
  e2bw_buf_reset(&s->bytes);
  int rc = e2bw_base64_decode_run(&s->bytes, b64, room, &used);
  if (rc == -1) return -1;
  const char *p = b64 + used;
  if (rc != 0 || p == end || *p != '"') return 1; /* escapes or odd text: the general way */
  p++;
  if (!(p = expect(p, end, "}")) || !(p = expect(p, end, "}")) || !(p = expect(p, end, "}")) || skip_ws(p, end) != end) return 1;
  return deliver(core, s, which);
}

/* files.watch: {"start":{}} answers the call with the watch id, then each
 * {"filesystem":{...}} becomes a files.event. Returns 1 when s is freed. */
static int on_watch_event(e2bw_core *core, e2bw_stream *s, const cJSON *event) {
  const cJSON *item;
  if (cJSON_GetObjectItemCaseSensitive(event, "start")) {
    if (!s->call) return 0; /* a repeated start changes nothing */
    s->deadline = -1;
    e2bw_call *call = s->call;
    call->stream = NULL;
    s->call = NULL;
    e2bw_call_succeed(core, call, e2bw_watch_started(s->sandbox_id, s->pid, s->watch_dir));
  } else if ((item = cJSON_GetObjectItemCaseSensitive(event, "filesystem"))) {
    if (s->call) {
      stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's watch did not begin with a start event"));
      return 1;
    }
    cJSON *params = e2bw_watch_event_params(s->request_id, s->sandbox_id, s->pid, s->watch_dir, item);
    if (params) e2bw_notify(core, "files.event", params);
  } /* keepalive and unknown events: consumed, never surfaced */
  return 0;
}

/* Handles one frame. Returns 1 when the stream is over (s is freed). */
static int on_frame(e2bw_core *core, e2bw_stream *s, const e2bw_env_frame *f) {
  const char *b64;
  size_t b64_len;
  int which;
  if (!(f->flags & E2BW_ENV_FLAG_END_STREAM) && s->kind != STREAM_WATCH && s->pid > 0 && (which = fast_data_event(f->data, f->len, &b64, &b64_len)) >= 0) {
    int rc = fast_output(core, s, which, b64, b64_len);
    if (rc == 0) return 0;
    if (rc < 0) {
      stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
      return 1;
    }
  }
  cJSON *msg = cJSON_ParseWithLength((const char *)f->data, f->len);
  if (!cJSON_IsObject(msg)) {
    cJSON_Delete(msg);
    stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent a frame that is not a JSON object on %s", s->op ? s->op->what : "a stream"));
    return 1;
  }
  if (f->flags & E2BW_ENV_FLAG_END_STREAM) {
    s->wire_done = 1;
    cJSON *error = cJSON_GetObjectItemCaseSensitive(msg, "error");
    e2bw_redact(core, error); /* before its message is cut to length */
    if (error) stream_error(core, s, e2bw_connect_error(error, s->op ? s->op->what : "stream"));
    else stream_complete(core, s);
    cJSON_Delete(msg);
    return 1;
  }
  const cJSON *event = cJSON_GetObjectItemCaseSensitive(msg, "event");
  const cJSON *item;
  int over = 0;
  if (s->kind == STREAM_WATCH) { /* WatchDirResponse: the oneof at top level (reference §5) */
    over = on_watch_event(core, s, msg);
    cJSON_Delete(msg);
    return over;
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(event, "start"))) {
    if (s->pid > 0) { /* a second start is a broken stream */
      stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent a second start event"));
      over = 1;
    } else {
      over = on_start(core, s, item);
    }
  } else if (s->pid <= 0 && !cJSON_GetObjectItemCaseSensitive(event, "keepalive")) {
    stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's stream did not begin with a start event"));
    over = 1;
  } else if ((item = cJSON_GetObjectItemCaseSensitive(event, "data"))) {
    if (on_data(core, s, item) != 0) {
      stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent output that is not base64"));
      over = 1;
    }
  } else if ((item = cJSON_GetObjectItemCaseSensitive(event, "end"))) {
    cJSON_Delete(s->end);
    s->end = cJSON_Duplicate(item, 1);
  } /* keepalive and unknown events: consumed, never surfaced */
  cJSON_Delete(msg);
  return over;
}

static void stream_data(e2bw_core *core, e2bw_http_op *op, const uint8_t *data, size_t len) {
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
      if (on_frame(core, s, &frame)) return;
    } else if (st < 0) {
      stream_error(core, s, e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent %s at byte %llu of %s", e2bw_env_strerror(st),
                                           (unsigned long long)s->dec.offset, op->what));
      return;
    }
  }
}

/* The HTTP answer ended before the end-stream frame. */
static void stream_done(e2bw_core *core, e2bw_http_op *op) {
  e2bw_stream *s = op->owner;
  cJSON *error;
  if (op->status != 200) error = e2bw_envd_status_error(op, s->sandbox_id);
  else if (!e2bw_env_decoder_at_boundary(&s->dec))
    error = e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's stream %s was cut in the middle of a frame", op->what);
  else
    error = e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's stream %s ended without an end-of-stream frame", op->what);
  e2bw_http_op_finish(core, op);
  s->op = NULL;
  stream_error(core, s, error);
}

static void stream_fail(e2bw_core *core, e2bw_http_op *op, cJSON *error) {
  e2bw_stream *s = op->owner;
  s->op = NULL; /* the transport layer frees it */
  stream_error(core, s, error);
}

/* A new stream for the call, registered but not yet sent: the caller may
 * set more fields, then stream_send. NULL after failing the call. */
static e2bw_stream *stream_new(e2bw_core *core, e2bw_call *call, int kind, double timeout_s, const char *user, int base64) {
  e2bw_stream *s = calloc(1, sizeof *s);
  char *id_text = e2bw_rpc_id_text(call->id);
  if (!s || !id_text) {
    free(s);
    free(id_text);
    fail_oom(core, call);
    return NULL;
  }
  s->kind = kind;
  s->call = call;
  s->request_id = id_text;
  s->sandbox_id = dup_str(param_str(call, "sandbox_id"));
  s->user = dup_str(user);
  s->base64 = base64;
  s->timeout_s = timeout_s;
  s->deadline = timeout_s > 0 ? core->now + timeout_s * 1000.0 : -1;
  e2bw_env_decoder_init(&s->dec);
  const cJSON *input = param(call, "stdin");
  if (kind == STREAM_RUN && cJSON_IsString(input)) {
    s->has_stdin = 1;
    if (s->base64) e2bw_base64_decode(&s->stdin_data, input->valuestring, strlen(input->valuestring));
    else e2bw_buf_append_str(&s->stdin_data, input->valuestring);
  }
  s->next = core->streams;
  core->streams = s;
  call->stream = s;
  return s;
}

/* Sends the stream's request (takes message). */
static void stream_send(e2bw_core *core, e2bw_stream *s, const char *rpc, cJSON *message) {
  if (!s->sandbox_id || !message) {
    cJSON_Delete(message);
    stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
    return;
  }
  e2bw_envd_req req = {s->sandbox_id, rpc, message, s->user, 1,
                       s->timeout_s > 0 ? s->timeout_s * 1000.0 + LIFETIME_GRACE_MS : -1, s->call->request_timeout_ms};
  s->op = e2bw_envd_request(core, &req);
  cJSON_Delete(message);
  if (!s->op) {
    stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
    return;
  }
  s->op->owner = s;
  s->op->on_data = stream_data;
  s->op->on_done = stream_done;
  s->op->on_fail = stream_fail;
  s->op->idle_ms = E2BW_STREAM_IDLE_INTERVALS * core->config.keepalive_interval_ms;
}

/* Starts a Start or Connect stream for the call, as the call's user. */
static void stream_open(e2bw_core *core, e2bw_call *call, int kind, const char *rpc, cJSON *message, double timeout_s) {
  const char *encoding = param_str(call, "encoding");
  e2bw_stream *s = stream_new(core, call, kind, timeout_s, param_str(call, "user"), encoding && strcmp(encoding, "base64") == 0);
  if (!s) {
    cJSON_Delete(message);
    return;
  }
  stream_send(core, s, rpc, message);
}

void e2bw_run_internal(e2bw_core *core, e2bw_call *call, cJSON *start_message, const char *user, double timeout_s,
                       e2bw_run_done_fn done) {
  e2bw_stream *s = stream_new(core, call, STREAM_RUN, timeout_s, user, 0);
  if (!s) {
    cJSON_Delete(start_message);
    return;
  }
  s->run_done = done;
  stream_send(core, s, "process.Process/Start", start_message);
}

void e2bw_watch_open(e2bw_core *core, e2bw_call *call, cJSON *watch_message, const char *user, const char *dir, double watch_number) {
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
    stream_error(core, s, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
    return;
  }
  stream_send(core, s, "filesystem.Filesystem/WatchDir", watch_message);
}

int e2bw_watch_close(e2bw_core *core, const char *sandbox_id, double watch_number) {
  for (e2bw_stream *s = core->streams; s; s = s->next) {
    if (s->kind != STREAM_WATCH || s->pid != watch_number || strcmp(s->sandbox_id, sandbox_id) != 0 || s->call) continue;
    notify_exit(core, s, NULL);
    stream_free(core, s);
    return 1;
  }
  return 0;
}

/* --- the process clock ---------------------------------------------------------- */

double e2bw_streams_next_deadline(const e2bw_core *core) {
  double best = -1;
  for (const e2bw_stream *s = core->streams; s; s = s->next)
    if (s->deadline >= 0 && (best < 0 || s->deadline < best)) best = s->deadline;
  return best;
}

void e2bw_streams_tick(e2bw_core *core) {
  for (;;) {
    e2bw_stream *late = NULL;
    for (e2bw_stream *s = core->streams; s && !late; s = s->next)
      if (s->deadline >= 0 && s->deadline <= core->now) late = s;
    if (!late) return;
    late->deadline = -1;
    if (late->kind == STREAM_WATCH) { /* only armed until the start event: no process to kill */
      if (late->call) stream_error(core, late, e2bw_error_new(E2BW_ERR_TIMEOUT, "envd did not start watching '%.300s' within %g s (request_timeout)",
                                                                late->watch_dir, late->call->request_timeout_ms / 1000.0));
      continue;
    }
    late->timed_out = 1;
    kill_process(core, late->sandbox_id, late->pid);
    if (late->kind == STREAM_RUN) {
      cJSON *e = e2bw_error_new(E2BW_ERR_TIMEOUT, "The command did not finish within its timeout of %g s; it was killed", late->timeout_s);
      if (late->pid > 0) e2bw_error_set_num(e, "pid", late->pid);
      late->pid = 0; /* killed already */
      stream_error(core, late, e);
    } else if (late->call) { /* not even started within its lifetime */
      stream_error(core, late, e2bw_error_new(E2BW_ERR_TIMEOUT, "The process did not start within its timeout of %g s", late->timeout_s));
    }
    /* exec.start / pty: the stream goes on and reports the kill in exec.exit */
  }
}

void e2bw_stream_abandon(e2bw_core *core, e2bw_stream *s) {
  /* the call is being answered another way (or freed): no answer from here */
  if (s->call) s->call->stream = NULL;
  s->call = NULL;
  if (s->kind == STREAM_RUN) kill_process(core, s->sandbox_id, s->pid);
  stream_free(core, s);
}

void e2bw_streams_cancel_all(e2bw_core *core) {
  while (core->streams) {
    e2bw_stream *s = core->streams;
    if (s->call) {
      e2bw_stream_abandon(core, s); /* its call is answered by the caller */
      continue;
    }
    if (s->kind == STREAM_WATCH)
      notify_exit(core, s, e2bw_error_new(E2BW_ERR_CANCELED, "Stopped watching: the provider is shutting down"));
    else
      notify_exit(core, s, e2bw_error_new(E2BW_ERR_CANCELED, "Stopped following process %.0f: the provider is shutting down (the process keeps running)", s->pid));
    stream_free(core, s);
  }
}

void e2bw_streams_free(e2bw_core *core) {
  while (core->streams) {
    e2bw_stream *s = core->streams;
    if (s->op) { /* no actions are read after free: just drop it */
      e2bw_http_op_finish(core, s->op);
      s->op = NULL;
    }
    stream_free(core, s);
  }
}

/* --- requests -------------------------------------------------------------------- */

/* StartRequest for a shell command line (as the E2B SDK runs commands). */
static cJSON *start_message(const e2bw_call *call, int with_stdin, const cJSON *pty) {
  cJSON *msg = cJSON_CreateObject();
  cJSON *process = cJSON_AddObjectToObject(msg, "process");
  const cJSON *envs = param(call, "envs");
  const char *cwd = param_str(call, "cwd");
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
    e2bw_push(args, cJSON_CreateString(param_str(call, "command")));
    if (cJSON_IsObject(envs)) e2bw_add(process, "envs", cJSON_Duplicate(envs, 1));
  }
  if (cwd) cJSON_AddStringToObject(process, "cwd", cwd);
  const char *tag = param_str(call, "tag");
  if (tag) cJSON_AddStringToObject(msg, "tag", tag);
  cJSON_AddBoolToObject(msg, "stdin", with_stdin);
  return msg;
}

static double param_seconds(const e2bw_call *call, const char *name, double fallback) {
  const cJSON *v = param(call, name);
  return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

static void run_go(e2bw_core *core, e2bw_call *call) {
  cJSON *msg = start_message(call, cJSON_IsString(param(call, "stdin")), NULL);
  double timeout = param_seconds(call, "timeout", DEFAULT_RUN_TIMEOUT_S);
  stream_open(core, call, STREAM_RUN, "process.Process/Start", msg, timeout > 0 ? timeout : DEFAULT_RUN_TIMEOUT_S);
}

static void start_go(e2bw_core *core, e2bw_call *call) {
  cJSON *msg = start_message(call, cJSON_IsTrue(param(call, "stdin")), NULL);
  stream_open(core, call, STREAM_START, "process.Process/Start", msg, param_seconds(call, "timeout", 0));
}

static void pty_go(e2bw_core *core, e2bw_call *call) {
  cJSON *pty = cJSON_CreateObject();
  cJSON *size = cJSON_AddObjectToObject(pty, "size");
  cJSON_AddNumberToObject(size, "cols", param(call, "cols")->valuedouble);
  cJSON_AddNumberToObject(size, "rows", param(call, "rows")->valuedouble);
  cJSON *msg = start_message(call, 1, pty);
  cJSON_Delete(pty);
  stream_open(core, call, STREAM_START, "process.Process/Start", msg, param_seconds(call, "timeout", 0));
}

static void attach_go(e2bw_core *core, e2bw_call *call) {
  stream_open(core, call, STREAM_ATTACH, "process.Process/Connect", selector(e2bw_param_pid(call->params, "pid")), 0);
}

void e2bw_exec_run(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, run_go); }
void e2bw_exec_start(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, start_go); }
void e2bw_pty_open(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, pty_go); }
void e2bw_process_attach(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, attach_go); }

/* --- unary process calls ------------------------------------------------------------ */

/* The answer's JSON object, or NULL after failing the call. */
static cJSON *unary_answer(e2bw_core *core, e2bw_http_op *op) {
  e2bw_call *call = op->call;
  if (op->status != 200) {
    cJSON *error = e2bw_envd_status_error(op, param_str(call, "sandbox_id"));
    e2bw_http_op_finish(core, op);
    e2bw_call_fail(core, call, error);
    return NULL;
  }
  cJSON *json = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
  if (!cJSON_IsObject(json)) {
    cJSON_Delete(json);
    cJSON *e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd sent an invalid answer to %s: expected a JSON object", op->what);
    e2bw_http_op_finish(core, op);
    e2bw_call_fail(core, call, e);
    return NULL;
  }
  e2bw_http_op_finish(core, op);
  return json;
}

/* For answers with nothing to read ({}): the call, or NULL after failing it. */
static e2bw_call *unary_done(e2bw_core *core, e2bw_http_op *op) {
  e2bw_call *call = op->call;
  cJSON *answer = unary_answer(core, op);
  if (!answer) return NULL;
  cJSON_Delete(answer);
  return call;
}

static void unary(e2bw_core *core, e2bw_call *call, const char *rpc, cJSON *message, e2bw_http_done_fn done) {
  e2bw_envd_req req = {param_str(call, "sandbox_id"), rpc, message, NULL, 0, -1, call->request_timeout_ms};
  e2bw_http_op *op = message ? e2bw_envd_request(core, &req) : NULL;
  cJSON_Delete(message);
  if (!op) {
    fail_oom(core, call);
    return;
  }
  op->call = call;
  op->on_done = done;
}

static cJSON *pid_result(const e2bw_call *call) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "sandbox_id", param_str(call, "sandbox_id"));
  cJSON_AddNumberToObject(r, "pid", e2bw_param_pid(call->params, "pid"));
  return r;
}

/* process.list */
static void listed(e2bw_core *core, e2bw_http_op *op) {
  e2bw_call *call = op->call;
  cJSON *answer = unary_answer(core, op);
  if (!answer) return;
  cJSON *r = cJSON_CreateObject();
  cJSON *list = cJSON_AddArrayToObject(r, "processes");
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(answer, "processes")) {
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(p, "config");
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddNumberToObject(entry, "pid", e2bw_param_pid(p, "pid"));
    const cJSON *tag = cJSON_GetObjectItemCaseSensitive(p, "tag");
    if (cJSON_IsString(tag)) cJSON_AddStringToObject(entry, "tag", tag->valuestring);
    const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(config, "cmd");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(config, "args");
    const cJSON *envs = cJSON_GetObjectItemCaseSensitive(config, "envs");
    const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(config, "cwd");
    cJSON_AddStringToObject(entry, "cmd", cJSON_IsString(cmd) ? cmd->valuestring : "");
    e2bw_add(entry, "args", cJSON_IsArray(args) ? cJSON_Duplicate(args, 1) : cJSON_CreateArray());
    e2bw_add(entry, "envs", cJSON_IsObject(envs) ? cJSON_Duplicate(envs, 1) : cJSON_CreateObject());
    if (cJSON_IsString(cwd)) cJSON_AddStringToObject(entry, "cwd", cwd->valuestring);
    e2bw_push(list, entry);
  }
  cJSON_Delete(answer);
  e2bw_call_succeed(core, call, r);
}

static void list_go(e2bw_core *core, e2bw_call *call) { unary(core, call, "process.Process/List", cJSON_CreateObject(), listed); }
void e2bw_process_list(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, list_go); }

/* process.kill, process.signal, pty.close: SendSignal */
static void signalled(e2bw_core *core, e2bw_http_op *op) {
  e2bw_call *call = unary_done(core, op);
  if (!call) return;
  cJSON *r = pid_result(call);
  const char *sig = call->method->start == e2bw_process_signal ? e2bw_signal_param(param(call, "signal")) : "SIGNAL_SIGKILL";
  cJSON_AddStringToObject(r, "signal", sig + 7); /* "SIGNAL_SIGKILL" → "SIGKILL" */
  e2bw_call_succeed(core, call, r);
}

static void signal_go(e2bw_core *core, e2bw_call *call) {
  const char *sig = call->method->start == e2bw_process_signal ? e2bw_signal_param(param(call, "signal")) : "SIGNAL_SIGKILL";
  cJSON *msg = selector(e2bw_param_pid(call->params, "pid"));
  cJSON_AddStringToObject(msg, "signal", sig);
  unary(core, call, "process.Process/SendSignal", msg, signalled);
}

void e2bw_process_kill(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, signal_go); }
void e2bw_process_signal(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, signal_go); }
void e2bw_pty_close(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, signal_go); }

/* process.stdin and pty.input: SendInput (then CloseStdin when asked) */
enum { STDIN_WRITE = 1, STDIN_CLOSE };

static void stdin_step(e2bw_core *core, e2bw_http_op *op);

static void stdin_close(e2bw_core *core, e2bw_call *call) {
  call->step = STDIN_CLOSE;
  unary(core, call, "process.Process/CloseStdin", selector(e2bw_param_pid(call->params, "pid")), stdin_step);
}

static void stdin_step(e2bw_core *core, e2bw_http_op *op) {
  e2bw_call *call = unary_done(core, op);
  if (!call) return;
  if (call->step == STDIN_WRITE && cJSON_IsTrue(param(call, "close"))) {
    stdin_close(core, call);
    return;
  }
  cJSON *r = pid_result(call);
  const cJSON *written = cJSON_GetObjectItemCaseSensitive(call->scratch, "written");
  cJSON_AddNumberToObject(r, "written", cJSON_IsNumber(written) ? written->valuedouble : 0);
  if (call->method->start == e2bw_process_stdin) cJSON_AddBoolToObject(r, "closed", cJSON_IsTrue(param(call, "close")));
  e2bw_call_succeed(core, call, r);
}

static void input_go(e2bw_core *core, e2bw_call *call) {
  const cJSON *data = param(call, "data");
  if (!cJSON_IsString(data)) { /* process.stdin with only close */
    if (cJSON_IsTrue(param(call, "close"))) stdin_close(core, call);
    else e2bw_call_fail(core, call, e2bw_error_set_str(e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: give 'data', 'close' or both"), "field", "data"));
    return;
  }
  const char *encoding = param_str(call, "encoding");
  e2bw_buf bytes = {0}, b64 = {0};
  int rc = 0;
  if (encoding && strcmp(encoding, "base64") == 0) {
    rc = e2bw_base64_decode(&bytes, data->valuestring, strlen(data->valuestring));
    if (rc == -2) {
      e2bw_buf_free(&bytes);
      e2bw_call_fail(core, call, e2bw_error_set_str(e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: 'data' is not base64"), "field", "data"));
      return;
    }
  } else {
    rc = e2bw_buf_append_str(&bytes, data->valuestring);
  }
  rc |= e2bw_base64_encode(&b64, (const uint8_t *)bytes.data, bytes.len);
  call->scratch = cJSON_CreateObject();
  cJSON *msg = rc || !call->scratch ? NULL : selector(e2bw_param_pid(call->params, "pid"));
  if (msg) {
    cJSON_AddNumberToObject(call->scratch, "written", (double)bytes.len);
    int is_pty = call->method->start == e2bw_pty_input;
    cJSON_AddStringToObject(cJSON_AddObjectToObject(msg, "input"), is_pty ? "pty" : "stdin", b64.data ? b64.data : "");
  }
  e2bw_buf_free(&bytes);
  e2bw_buf_free(&b64);
  call->step = STDIN_WRITE;
  unary(core, call, "process.Process/SendInput", msg, stdin_step);
}

void e2bw_process_stdin(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, input_go); }
void e2bw_pty_input(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, input_go); }

/* pty.resize: Update */
static void resized(e2bw_core *core, e2bw_http_op *op) {
  e2bw_call *call = unary_done(core, op);
  if (!call) return;
  cJSON *r = pid_result(call);
  cJSON_AddNumberToObject(r, "cols", param(call, "cols")->valuedouble);
  cJSON_AddNumberToObject(r, "rows", param(call, "rows")->valuedouble);
  e2bw_call_succeed(core, call, r);
}

static void resize_go(e2bw_core *core, e2bw_call *call) {
  cJSON *msg = selector(e2bw_param_pid(call->params, "pid"));
  cJSON *size = cJSON_AddObjectToObject(cJSON_AddObjectToObject(msg, "pty"), "size");
  cJSON_AddNumberToObject(size, "cols", param(call, "cols")->valuedouble);
  cJSON_AddNumberToObject(size, "rows", param(call, "rows")->valuedouble);
  unary(core, call, "process.Process/Update", msg, resized);
}

void e2bw_pty_resize(e2bw_core *core, e2bw_call *call) { e2bw_envd_ensure(core, call, resize_go); }
