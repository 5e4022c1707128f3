/* http_ops.h — HTTP requests the core asks the host to perform: the request
 * action, the response as it arrives, deadlines and transport failures.
 * Whoever starts an op sets its owner and callbacks; this file never calls
 * up (an op fails through the on_fail its starter set). Calls only actions.c
 * and the codecs below it. */
#ifndef E2BW_HTTP_OPS_H
#define E2BW_HTTP_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "cJSON.h"
#include "core_state.h"

/* Called when a response is complete (any status). */
typedef void (*e2bw_http_done_fn)(e2bw_core *core, e2bw_http_op *op);
/* Streaming: body bytes as they arrive (instead of buffering them). */
typedef void (*e2bw_http_data_fn)(e2bw_core *core, e2bw_http_op *op, const uint8_t *data, size_t len);
/* Transport failure or deadline. The op is already unlinked (no more events
 * will come for it) and is freed after the callback returns. Set by whoever
 * starts the op (http_ops.c never calls up): an EPP call's ops fail the call
 * (e2bw_call_own), a stream's end the stream, NULL drops the error. */
typedef void (*e2bw_http_fail_fn)(e2bw_core *core, e2bw_http_op *op, cJSON *error);

/* One HTTP request the core asked the host to perform. Its owner is an EPP
 * call (e2bw_call_own), a stream (owner), or nobody (fire-and-forget: the
 * outcome is dropped); each sets on_fail for itself. */
struct e2bw_http_op {
	uint32_t id;
	e2bw_call *call;   /* the EPP call it serves (cancelled with it), or NULL */
	void *owner;       /* the stream it serves, or NULL */
	double deadline;   /* absolute, same clock as now_ms */
	double timeout_ms; /* what the deadline was set from, for messages */
	double idle_ms;    /* > 0: the deadline moves on with every byte */
	char *what;        /* "GET /sandboxes/<id>", for error messages */
	char *origin;      /* "https://api.e2b.app", for error messages */
	e2bw_core *core;   /* the core it belongs to (its secrets, for messages) */
	int status;        /* 0 until the head arrived */
	int held;          /* the caller paused reading: no idle deadline */
	int overflowed;    /* failed because the body passed E2BW_MAX_RESPONSE_BYTES */
	e2bw_buf headers;
	e2bw_buf body;
	e2bw_http_done_fn on_done;       /* NULL: finish quietly */
	e2bw_http_data_fn on_data;       /* NULL: buffer the body (up to the limit) */
	e2bw_http_fail_fn on_fail;       /* NULL: drop the error */
	void (*owner_free)(void *owner); /* non-NULL: frees owner with the op */
	e2bw_http_op *next;
};

/* A request to make: e2bw_http_start() copies everything. */
typedef struct e2bw_http_spec {
	const char *method;
	const char *url;
	const char *what;           /* short description for messages */
	const char *const *headers; /* name/value pairs, NULL-terminated */
	const uint8_t *body;
	size_t body_len;
	double timeout_ms;   /* deadline from now */
	uint8_t *body_given; /* body itself, malloc'd: passes to the request, freed on every path (no copy) */
} e2bw_http_spec;

/* Queues the request; the caller sets the op's owner and callbacks. NULL
 * when out of memory (nothing was queued). */
e2bw_http_op *e2bw_http_start(e2bw_core *core, const e2bw_http_spec *spec);
/* Finds a response header (case-insensitive); copies at most cap-1 bytes.
 * Returns 1 when found. */
int e2bw_http_header(const e2bw_http_op *op, const char *name, char *out, size_t cap);
/* Drops the op (no cancel action); used once its response is consumed. */
void e2bw_http_op_finish(e2bw_core *core, e2bw_http_op *op);
/* Cancels every op of a call (emits cancel actions). */
void e2bw_http_cancel_call(e2bw_core *core, e2bw_call *call);
void e2bw_http_ops_free(e2bw_core *core);
double e2bw_http_next_deadline(const e2bw_core *core);
void e2bw_http_tick(e2bw_core *core);

/* A 2xx status. */
static inline int e2bw_http_ok(int status)
{
	return status >= 200 && status < 300;
}

#endif
