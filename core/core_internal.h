/* core_internal.h — the core's private state, shared by its modules.
 * Nothing here is part of the public API (include/e2bw.h). */
#ifndef E2BW_CORE_INTERNAL_H
#define E2BW_CORE_INTERNAL_H

#include <stdint.h>

#include "buf.h"
#include "cJSON.h"
#include "config.h"
#include "e2bw.h"
#include "ndjson.h"
#include "redact.h"

typedef struct e2bw_call e2bw_call;
typedef struct e2bw_http_op e2bw_http_op;
typedef struct e2bw_method e2bw_method;

/* One pending output, pulled by e2bw_core_next_action(). */
typedef struct e2bw_action {
  int kind;
  uint32_t op;
  char *text;
  size_t text_len;
  uint8_t *body;
  size_t body_len;
  struct e2bw_action *next;
} e2bw_action;

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
  e2bw_call *call;          /* the EPP call it serves (cancelled with it), or NULL */
  void *owner;              /* the stream it serves, or NULL */
  double deadline;          /* absolute, same clock as now_ms */
  double timeout_ms;        /* what the deadline was set from, for messages */
  double idle_ms;           /* > 0: the deadline moves on with every byte */
  char *what;               /* "GET /sandboxes/<id>", for error messages */
  char *origin;             /* "https://api.e2b.app", for error messages */
  e2bw_core *core;          /* the core it belongs to (its secrets, for messages) */
  int status;               /* 0 until the head arrived */
  int held;                 /* the caller paused reading: no idle deadline */
  int overflowed;           /* failed because the body passed E2BW_MAX_RESPONSE_BYTES */
  e2bw_buf headers;
  e2bw_buf body;
  e2bw_http_done_fn on_done;  /* NULL: finish quietly */
  e2bw_http_data_fn on_data;  /* NULL: buffer the body (up to the limit) */
  e2bw_http_fail_fn on_fail;  /* NULL: drop the error */
  void (*owner_free)(void *owner); /* non-NULL: frees owner with the op */
  e2bw_http_op *next;
};

/* A request to make: e2bw_http_start() copies everything. */
typedef struct e2bw_http_spec {
  const char *method;
  const char *url;
  const char *what;               /* short description for messages */
  const char *const *headers;     /* name/value pairs, NULL-terminated */
  const uint8_t *body;
  size_t body_len;
  double timeout_ms;              /* deadline from now */
  uint8_t *body_given;            /* body itself, malloc'd: passes to the request, freed on every path (no copy) */
} e2bw_http_spec;

typedef struct e2bw_stream e2bw_stream;
typedef struct e2bw_sandbox_info e2bw_sandbox_info;

/* One EPP request being served. */
struct e2bw_call {
  cJSON *id;                /* a copy of the request id (string, number or null) */
  const e2bw_method *method;
  cJSON *params;            /* the request's params (an object, owned) */
  double request_timeout_ms;
  int step;                 /* the handler's own progress marker */
  cJSON *scratch;           /* the handler's own state between steps (owned) */
  void (*then)(e2bw_core *core, e2bw_call *call); /* continuation after e2bw_envd_ensure */
  /* Failure hook: sees the call's error first and may take it (returns 1)
   * to answer later; envd.c asks the control plane whether a sandbox the
   * sandbox proxy cannot find is paused or gone. */
  int (*vet_failure)(e2bw_core *core, e2bw_call *call, cJSON *error);
  /* Call teardown hook: what ends with this call (a stream registers
   * itself here) is torn down when the call ends another way. */
  void (*teardown)(e2bw_core *core, void *arg);
  void *teardown_arg;
  e2bw_call *next;
};

typedef void (*e2bw_start_fn)(e2bw_core *core, e2bw_call *call);

struct e2bw_core {
  e2bw_config config;
  int initialized;
  int shut_down;
  double now;               /* the latest time an input carried */
  uint32_t next_op_id;
  e2bw_call *calls;
  e2bw_http_op *ops;
  e2bw_action *actions, *actions_tail;
  e2bw_action *current;     /* the action the accessors describe */
  e2bw_ndjson ndjson;
  e2bw_stream *streams;     /* envd streams (stream.c) */
  e2bw_sandbox_info *sandboxes; /* what the data plane knows of each sandbox (envd.c) */
  e2bw_secrets secrets;     /* the API key and every envd token seen: never sent (redact.c) */
  e2bw_action *reserve;     /* an answer's worth of memory for out-of-memory errors */
  unsigned long alloc_mark; /* e2bw_alloc_failures() when the current input arrived */
  size_t detach_min;        /* 0, or the size from which long strings leave detached (e2bw.h) */
  char *key_hint;           /* how this transport's user sets api_key, or NULL (e2bw.h) */
};

/* cJSON_AddItemTo* keep the item when they fail (out of memory): these
 * free it instead, so an item is always owned by somebody. */
static inline int e2bw_add(cJSON *object, const char *key, cJSON *item) {
  if (cJSON_AddItemToObject(object, key, item)) return 1;
  cJSON_Delete(item);
  return 0;
}
static inline int e2bw_push(cJSON *array, cJSON *item) {
  if (cJSON_AddItemToArray(array, item)) return 1;
  cJSON_Delete(item);
  return 0;
}

/* --- actions.c --------------------------------------------------------- */
/* Queue an outgoing EPP message; takes ownership of text (NULL = out of memory,
 * reported as an internal error to nobody: the host's own timeout covers it).
 * Every message is scrubbed of credentials here, the one place all pass. */
void e2bw_emit_text(e2bw_core *core, char *text);
/* Returns -1 when the message was dropped (out of memory). */
int e2bw_emit_text_len(e2bw_core *core, char *text, size_t len);
/* Queues the answer to request `id` (text may be NULL: out of memory). When
 * it cannot be queued, a -32603 answer is sent from memory reserved for it,
 * so every request is still answered exactly once. */
void e2bw_emit_answer(e2bw_core *core, const cJSON *id, char *text);
/* (Re)reserves that memory; -1 when out of memory. */
int e2bw_reserve_answer(e2bw_core *core);
/* Queues a message whose `member` string travels beside it (e2bw.h's
 * detached strings); takes ownership of text and value. Both are scrubbed. */
int e2bw_emit_detached(e2bw_core *core, char *text, size_t len, int member, char *value, size_t value_len);
int e2bw_emit_http(e2bw_core *core, uint32_t op, char *head, uint8_t *body, size_t body_len);
void e2bw_emit_cancel(e2bw_core *core, uint32_t op);
void e2bw_actions_free(e2bw_core *core);

/* --- alloc.c ------------------------------------------------------------ */
/* Installs cJSON's allocator hooks, which count failed allocations. */
void e2bw_alloc_hooks(void);
/* Every input starts here: the time, and the allocation-failure mark. */
void e2bw_enter(e2bw_core *core, double now_ms);
/* How many cJSON allocations have failed so far, in this process. cJSON
 * ignores most of them (an Add* that fails leaves the member out), so a
 * result built while this moved is not sent as a success: it may be partial. */
unsigned long e2bw_alloc_failures(void);

/* --- calls.c ------------------------------------------------------------- */
/* Answer the call and free it. Both take ownership of result / error. */
void e2bw_call_succeed(e2bw_core *core, e2bw_call *call, cJSON *result);
void e2bw_call_fail(e2bw_core *core, e2bw_call *call, cJSON *error);
/* The handler emitted the call's answer itself (a large result written
 * straight to text): cancel its requests and free it. */
void e2bw_call_answered(e2bw_core *core, e2bw_call *call);
/* Answer a request that never became a call (bad envelope, unknown method). */
void e2bw_reply_error(e2bw_core *core, const cJSON *id, cJSON *error);
/* Frees every call without answering (the core is being freed). */
void e2bw_calls_free(e2bw_core *core);
/* Makes the call the op's owner: cancelled with the call, and a transport
 * failure or deadline fails the call. */
void e2bw_call_own(e2bw_http_op *op, e2bw_call *call);
/* Ask the host for a request on behalf of `call`. headers: NULL-terminated
 * name/value pairs. Returns the op, or NULL after failing the call. */
e2bw_http_op *e2bw_call_request(e2bw_core *core, e2bw_call *call, const char *method, const char *url,
                                const char *what, const char *const *headers, const cJSON *json_body,
                                e2bw_http_done_fn on_done);
/* Scrubs every known credential from every string of a JSON tree: for
 * backend text before it is cut to length (the emit path scrubs the rest). */
void e2bw_redact(const e2bw_core *core, cJSON *error);
/* Queues a notification (takes ownership of params). */
void e2bw_notify(e2bw_core *core, const char *method, cJSON *params);

/* --- http_ops.c -------------------------------------------------------- */
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

/* --- stream.c ------------------------------------------------------------ */
double e2bw_streams_next_deadline(const e2bw_core *core);
void e2bw_streams_tick(e2bw_core *core);
/* Ends every stream (shutdown): each gets its exec.exit, as canceled. */
void e2bw_streams_cancel_all(e2bw_core *core);
void e2bw_streams_free(e2bw_core *core);

/* --- envd.c -------------------------------------------------------------- */
void e2bw_sandboxes_free(e2bw_core *core);

#endif
