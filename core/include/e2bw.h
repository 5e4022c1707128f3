/*
 * e2bw.h — the e2b-wasm core: a sans-IO EPP/1 provider for backends that speak
 * the E2B protocol (REST control plane + envd).
 *
 * The core never opens a socket, reads a clock or touches a file. It is driven
 * by three kinds of input and answers with actions:
 *
 *   in:  EPP/1 messages from the host (whole messages, or NDJSON bytes split
 *        anywhere); HTTP events for requests it asked for (head, body chunks,
 *        end, failure); the time, as a number the caller passes with every
 *        input (wall-clock milliseconds; only differences matter).
 *   out: actions pulled with e2bw_core_next_action(): send this EPP message,
 *        perform this HTTP request, cancel that request.
 *
 * Time: the core has no clock. Every input carries `now_ms`. After any call,
 * e2bw_core_next_deadline() tells when the core next needs to be woken; the
 * caller arms one timer and calls e2bw_core_tick(now) when it fires (the
 * ngtcp2 "expiry" pattern). Overdue requests are then cancelled and their EPP
 * calls answered with a typed timeout error.
 *
 * Ownership: input buffers stay the caller's; the core copies what it keeps.
 * Pointers returned by the action accessors are owned by the core and valid
 * until the next call to e2bw_core_next_action() or e2bw_core_free().
 *
 * One core serves many concurrent EPP calls; every request that carries an id
 * is answered exactly once, whatever the backend does. Not thread-safe: one
 * core per thread (or per wasm instance). No mutable globals.
 */
#ifndef E2BW_H
#define E2BW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define E2BW_VERSION "0.1.0"

/* Messages larger than this (one EPP line or one submitted message) are
 * answered with -32600 and dropped without being buffered. */
#ifndef E2BW_MAX_MESSAGE_BYTES
#define E2BW_MAX_MESSAGE_BYTES (16u * 1024u * 1024u)
#endif

/* A control-plane response body larger than this is a bad_response error. */
#ifndef E2BW_MAX_RESPONSE_BYTES
#define E2BW_MAX_RESPONSE_BYTES (8u * 1024u * 1024u)
#endif

typedef struct e2bw_core e2bw_core;

/* Action kinds returned by e2bw_core_next_action(). */
typedef enum e2bw_action_kind {
	E2BW_ACTION_NONE = 0,  /* nothing pending */
	E2BW_ACTION_SEND = 1,  /* text = one EPP message (JSON, no newline) */
	E2BW_ACTION_HTTP = 2,  /* op = request id; text = request head as JSON:
                             {"op":N,"method":"GET","url":"...","headers":[["k","v"],...]}
                             body = request body bytes (may be empty) */
	E2BW_ACTION_CANCEL = 3 /* op = request to abort; report nothing more for it */
} e2bw_action_kind;

/* What a SEND carries, from e2bw_action_message(), so a loader can route
 * messages without reading them or knowing any method. Every message the
 * core sends belongs to one call: an answer names it by its "id", a
 * notification by params.request_id (the call's id, as the request wrote
 * it). E2BW_MESSAGE_LAST marks the call's last message: nothing after it
 * names that id again. An answer without it is followed by the call's
 * notifications (a stream: exec.start, pty.open, process.attach,
 * files.watch) up to the one marked last (exec.exit, files.watch_end). */
typedef enum e2bw_message {
	E2BW_MESSAGE_ANSWER = 1,       /* the answer to a request */
	E2BW_MESSAGE_NOTIFICATION = 2, /* a notification of a call */
	E2BW_MESSAGE_LAST = 4          /* flag: the call's last message */
} e2bw_message;

/* Transport failures the caller reports with e2bw_core_http_fail(). */
typedef enum e2bw_net_failure {
	E2BW_NET_REFUSED = 1, /* connection refused / no route: nothing listens */
	E2BW_NET_DNS = 2,     /* the host name did not resolve */
	E2BW_NET_RESET = 3,   /* connection cut before or during the response */
	E2BW_NET_TLS = 4,     /* TLS handshake or certificate failure */
	E2BW_NET_OTHER = 5,   /* anything else the platform reports */
	E2BW_NET_PROTOCOL = 6 /* the peer answered with something that is not HTTP */
} e2bw_net_failure;

/* Returns a new core, or NULL when out of memory. */
e2bw_core *e2bw_core_new(void);
void e2bw_core_free(e2bw_core *core);
const char *e2bw_version(void);

/* One whole EPP/1 message (a JSON-RPC 2.0 request or notification). */
void e2bw_core_submit(e2bw_core *core, const char *msg, size_t len, double now_ms);

/* Detached strings, for hosts that take messages as objects rather than JSON
 * text: the one long string of a message travels beside it as raw UTF-8, so
 * it is neither escaped into JSON nor parsed back out of it.
 *
 * In: msg is the message with params.<member> holding "" (any string); the
 * core puts value[0..value_len) there (UTF-8; a NUL is refused as in JSON
 * text). The message limit applies to len + value_len.
 *
 * Out: once e2bw_core_set_detach(core, min_len) is given a nonzero min_len,
 * the output in exec.output (params.data) of at least min_len bytes, and the
 * content of every files.read answer (result.content), leave detached: a SEND
 * action whose body is the string as UTF-8 (valid, unescaped), whose text
 * is the message with that member "", and whose op names the member
 * (e2bw_detached), plus E2BW_DETACHED_ASCII when every byte is ASCII (a
 * loader may then use a cheaper decoder). A SEND whose op is 0 is whole, as
 * always. Either form may arrive whatever the setting when it changes
 * between calls. */
typedef enum e2bw_detached {
	E2BW_DETACHED_DATA = 1,    /* params.data */
	E2BW_DETACHED_CONTENT = 2, /* result.content */
	E2BW_DETACHED_ASCII = 256  /* flag: the value is ASCII only */
} e2bw_detached;

void e2bw_core_submit_detached(e2bw_core *core, const char *msg, size_t len, const char *member,
	size_t member_len, const char *value, size_t value_len, double now_ms);
void e2bw_core_set_detach(e2bw_core *core, size_t min_len);

/* How a user of this transport sets the API key, quoted when initialize's
 * config lacks api_key ("'api_key' is required: <hint>"). The core reads no
 * environment and cannot know where its config came from: the loader does
 * (a node/1 host fills it from its own config, the stdio runner takes it
 * from whoever sends initialize). Copied (text[0..len), UTF-8); without it
 * the hint is "give it in initialize's params.config". */
void e2bw_core_set_key_hint(e2bw_core *core, const char *text, size_t len);

/* The host's config (a JSON object, as initialize's params.config) for a
 * host that never sends initialize (a node/1 host makes the plugin from its
 * own config): the first request other than initialize finds the core
 * initialized with it, or is answered with why it cannot be (a missing
 * api_key, a bad URL), and the core stays uninitialized. An initialize the
 * host sends first takes its place. Copied; returns 0, or -1 when text is
 * not a JSON object or memory ran out (nothing is kept). */
int e2bw_core_set_host_config(e2bw_core *core, const char *text, size_t len);

/* NDJSON bytes as they arrive on stdin, split anywhere. Lines are framed
 * inside the core; an over-long line is answered with -32600 without being
 * buffered whole. e2bw_core_ndjson_end() processes a final unterminated line. */
void e2bw_core_ndjson_feed(e2bw_core *core, const char *data, size_t len, double now_ms);
void e2bw_core_ndjson_end(e2bw_core *core, double now_ms);

/* HTTP events for request `op`. Headers are "name: value" lines separated by
 * '\n' (any case). Events for an unknown or cancelled op are ignored. */
void e2bw_core_http_head(e2bw_core *core, uint32_t op, int status, const char *headers, size_t headers_len,
	double now_ms);
void e2bw_core_http_body(e2bw_core *core, uint32_t op, const uint8_t *data, size_t len, double now_ms);
void e2bw_core_http_end(e2bw_core *core, uint32_t op, double now_ms);
void e2bw_core_http_fail(e2bw_core *core, uint32_t op, int failure, double now_ms);

/* The caller pauses (held = 1) or resumes (held = 0) reading op's body because
 * its own consumer is behind (backpressure). While held, the op's idle
 * deadline is suspended: silence the caller chose is not a dead backend.
 * Resuming starts a fresh idle window. */
void e2bw_core_http_hold(e2bw_core *core, uint32_t op, int held, double now_ms);

/* Earliest time (same clock as now_ms) at which e2bw_core_tick() must run,
 * or -1 when nothing waits on time. */
double e2bw_core_next_deadline(const e2bw_core *core);
void e2bw_core_tick(e2bw_core *core, double now_ms);

/* Pops the next action (see e2bw_action_kind); the accessors below describe
 * it until the next call. */
int e2bw_core_next_action(e2bw_core *core);
uint32_t e2bw_action_op(const e2bw_core *core);
const char *e2bw_action_text(const e2bw_core *core);
size_t e2bw_action_text_len(const e2bw_core *core);
const uint8_t *e2bw_action_body(const e2bw_core *core);
size_t e2bw_action_body_len(const e2bw_core *core);
/* A SEND's e2bw_message bits (0 for other actions). */
int e2bw_action_message(const e2bw_core *core);

/* 1 once `shutdown` has been answered: the host may drop the core. */
int e2bw_core_is_shut_down(const e2bw_core *core);

/* A feature whose methods are implemented but which `initialize` does not
 * declare yet, because its contract case has not passed against a backend
 * (today: "templates.build"; docs/plugin-contract.md, "Methods and
 * features"; docs/templates.md, "Declaring the feature"), answers -32003 like any undeclared feature. This
 * opens it on this core anyway, for testing against a backend that has the
 * API; `initialize` still does not declare it. Returns 0, or -1 when
 * `feature` is not one awaiting its contract case. */
int e2bw_core_preview_feature(e2bw_core *core, const char *feature);

/* The method table as JSON ({"methods":[{"name","feature","implemented"}]}),
 * so tests can check docs/epp-methods.json against the code. Caller frees the
 * result with e2bw_free(). NULL when out of memory. */
char *e2bw_describe_methods(void);
void e2bw_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* E2BW_H */
