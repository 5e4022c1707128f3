/* stream.h — the stream engine (docs/e2b-protocol-notes.md, "Process
 * service", "Filesystem service"): one e2bw_stream follows
 * one envd server stream (process Start/Connect, filesystem WatchDir) and
 * guarantees exactly one ending: the call's answer, or one exec.exit /
 * files.watch_end, whatever the backend does. Split by concern, from the
 * top: stream_open.h (opening a stream for a call: exec, internal runs,
 * watches), stream_read.h (Connect envelopes → events → answers and
 * notifications), and this file's stream.c (lifecycle, endings, the command
 * clock, call teardown). The handlers (process.c, files_chmod.c,
 * files_watch.c) sit above all three; stream.c calls envd.c, calls.c,
 * http_ops.c, actions.c and the codecs. */
#ifndef E2BW_STREAM_H
#define E2BW_STREAM_H

#include "cJSON.h"
#include "calls.h"
#include "core_state.h"
#include "envelope.h"
#include "http_ops.h"
#include "json_text.h"

enum e2bw_stream_kind {
	STREAM_RUN,
	STREAM_START,
	STREAM_ATTACH,
	STREAM_WATCH
};
enum {
	OUT_STDOUT,
	OUT_STDERR,
	OUT_PTY,
	OUT__COUNT
};

/* exec.run keeps at most this much of each stream (the rest is counted). */
#ifndef E2BW_MAX_RUN_OUTPUT
#define E2BW_MAX_RUN_OUTPUT (32u * 1024u * 1024u)
#endif

/* An internal run's result (files.chmod): exec.run-shaped, handed to the
 * handler instead of answering the call. */
typedef void (*e2bw_run_done_fn)(e2bw_core *core, e2bw_call *call, cJSON *result);

struct e2bw_stream {
	int kind;
	e2bw_call *call;  /* the call still to answer, or NULL */
	e2bw_http_op *op; /* the Start/Connect answer, or NULL once over */
	char *request_id; /* JSON text of the originating request's id */
	char *sandbox_id;
	char *user;
	double pid; /* 0 until the start event */
	int base64; /* output as exact bytes */
	e2bw_env_decoder dec;
	cJSON *end; /* the end event, once seen */
	uint64_t offset[OUT__COUNT];
	e2bw_utf8_carry carry[OUT__COUNT];
	e2bw_buf run_out[2]; /* exec.run: stdout, stderr */
	uint64_t dropped[2]; /* exec.run: bytes past E2BW_MAX_RUN_OUTPUT */
	e2bw_buf bytes;      /* scratch: one decoded data event */
	double deadline;     /* the command's own timeout, or -1 */
	double timeout_s;
	int timed_out;
	int wire_done;       /* the end-stream frame came: nothing to cancel */
	e2bw_buf stdin_data; /* exec.run: input to send after start */
	int has_stdin;
	e2bw_run_done_fn run_done; /* internal run (files.chmod): gets the result */
	char *watch_dir;           /* files.watch: the watched directory */
	e2bw_stream *next;
};

/* --- stream.c: the streams' lifecycle -------------------------------------- */

double e2bw_streams_next_deadline(const e2bw_core *core);
void e2bw_streams_tick(e2bw_core *core);
/* Ends every stream (shutdown): each gets its exec.exit, as canceled. */
void e2bw_streams_cancel_all(e2bw_core *core);
void e2bw_streams_free(e2bw_core *core);
extern const char *const e2bw_stream_out_names[OUT__COUNT]; /* "stdout", "stderr", "pty" */
/* {"process":{"pid":N}} — envd's ProcessSelector. */
cJSON *e2bw_process_selector(double pid);
/* A fire-and-forget unary envd call (takes message): nobody's answer. */
e2bw_http_op *e2bw_stream_oneway(e2bw_core *core, const char *sandbox_id, const char *rpc, cJSON *message);
/* Registers s as the call's stream: ending the call another way tears it down. */
void e2bw_stream_attach(e2bw_stream *s, e2bw_call *call);
/* The call is being answered here: it no longer tears the stream down.
 * Returns the call (NULL when none waits). */
e2bw_call *e2bw_stream_detach(e2bw_stream *s);
/* Frees the stream; an op still running is cancelled. */
void e2bw_stream_free(e2bw_core *core, e2bw_stream *s);
/* exec.exit (or files.watch_end) for a followed stream; takes failure. */
void e2bw_stream_notify_exit(e2bw_core *core, e2bw_stream *s, cJSON *failure);
/* Ends the stream with an error (takes it): the waiting call fails with it,
 * or the host gets exec.exit carrying it. s is freed. */
void e2bw_stream_error(e2bw_core *core, e2bw_stream *s, cJSON *error);
/* The end-stream frame arrived without an error. s is freed. */
void e2bw_stream_complete(e2bw_core *core, e2bw_stream *s);

#endif
