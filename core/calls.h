/* calls.h — one EPP call's life below the handlers: answering it exactly
 * once, tearing down what ends with it (the hook a stream registers), and
 * the HTTP requests it owns (their failures fail it). It knows no handler
 * and no stream: the layers above call down into it. Calls http_ops.c,
 * actions.c and the codecs below them. */
#ifndef E2BW_CALLS_H
#define E2BW_CALLS_H

#include "cJSON.h"
#include "core_state.h"
#include "http_ops.h"

typedef struct e2bw_method e2bw_method;

/* One EPP request being served. */
struct e2bw_call {
	cJSON *id; /* a copy of the request id (string, number or null) */
	const e2bw_method *method;
	cJSON *params; /* the request's params (an object, owned) */
	double request_timeout_ms;
	int step;                                       /* the handler's own progress marker */
	cJSON *scratch;                                 /* the handler's own state between steps (owned) */
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

/* The call's param NAME (NULL when absent); as a string's text, or as a
 * number's item (NULL when absent or of another type). */
const cJSON *e2bw_call_param(const e2bw_call *call, const char *name);
const char *e2bw_call_param_str(const e2bw_call *call, const char *name);
const cJSON *e2bw_call_param_num(const e2bw_call *call, const char *name);

/* A method's handler: starts serving the call (method table, methods.h). */
typedef void (*e2bw_start_fn)(e2bw_core *core, e2bw_call *call);

/* Answer the call and free it. Both take ownership of result / error. */
void e2bw_call_succeed(e2bw_core *core, e2bw_call *call, cJSON *result);
void e2bw_call_fail(e2bw_core *core, e2bw_call *call, cJSON *error);
/* The same for a call whose stream goes on after its answer: the stream's
 * notifications follow, and its end is the call's last message (e2bw.h,
 * e2bw_message). */
void e2bw_call_succeed_streaming(e2bw_core *core, e2bw_call *call, cJSON *result);
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
	const char *what, const char *const *headers, const cJSON *json_body, e2bw_http_done_fn on_done);
/* Scrubs every known credential from every string of a JSON tree: for
 * backend text before it is cut to length (the emit path scrubs the rest). */
void e2bw_redact(const e2bw_core *core, cJSON *error);
/* Queues a notification of the call params.request_id names (takes
 * ownership of params); last: nothing will follow it for that call. */
void e2bw_notify(e2bw_core *core, const char *method, cJSON *params, int last);

#endif
