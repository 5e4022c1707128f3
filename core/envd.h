/* envd.h — reaching envd, the daemon in each sandbox
 * (docs/e2b-protocol-notes.md, "Reaching envd", "Connect protocol"): what the
 * core knows of each sandbox (its envd token and domain, learned from the
 * control plane), envd URLs and headers, Connect unary and server-streaming
 * requests, and Connect errors → typed EPP errors. */
#ifndef E2BW_ENVD_H
#define E2BW_ENVD_H

#include "cJSON.h"
#include "calls.h"
#include "core_state.h"
#include "http_ops.h"

#define E2BW_ENVD_PORT "49983"

struct e2bw_sandbox_info {
	char *id;
	char *token;         /* envdAccessToken, or NULL (insecure sandbox) */
	char *traffic_token; /* trafficAccessToken (network.allowPublicTraffic false), or NULL */
	char *domain;        /* the sandbox domain the API returned, or NULL */
	char *envd_version;  /* envdVersion the API returned, or NULL */
	e2bw_sandbox_info *next;
};

/* Frees what the core knows of every sandbox (the core is being freed). */
void e2bw_sandboxes_free(e2bw_core *core);
/* Learns (or refreshes) what a Sandbox / SandboxDetail object says. A
 * trafficAccessToken is only in a Sandbox (create, connect, resume): a
 * SandboxDetail keeps the one learned before. */
void e2bw_sandbox_remember(e2bw_core *core, const cJSON *sandbox);
void e2bw_sandbox_forget(e2bw_core *core, const char *id);
const e2bw_sandbox_info *e2bw_sandbox_lookup(const e2bw_core *core, const char *id);

/* Runs next(core, call) once the call's sandbox (param sandbox_id) is known,
 * asking the control plane (GET /sandboxes/{id}) when it is not: a missing
 * sandbox fails the call with E2009, a paused one with `unavailable` and
 * data.status "paused". It also sets the call's failure hook: when envd's
 * sandbox proxy later answers that no sandbox runs behind the id, the call
 * asks the control plane again, so a paused sandbox is never reported gone. */
void e2bw_envd_ensure(e2bw_core *core, e2bw_call *call, void (*next)(e2bw_core *, e2bw_call *));

/* Options of one envd request. */
typedef struct e2bw_envd_req {
	const char *sandbox_id;
	const char *rpc;      /* "process.Process/Start" */
	const cJSON *message; /* the request message (protobuf-JSON) */
	const char *user;     /* Basic auth user, or NULL */
	int streaming;        /* enveloped request, server-streaming answer */
	double lifetime_ms;   /* Connect-Timeout-Ms (streams), < 0: none */
	double timeout_ms;    /* the core's deadline for the answer to start */
} e2bw_envd_req;

/* Queues the request; the caller sets owner and callbacks. For streams the
 * op's idle deadline (a multiple of the keepalive interval) is armed once
 * the answer begins. NULL when out of memory. */
e2bw_http_op *e2bw_envd_request(e2bw_core *core, const e2bw_envd_req *req);

/* A unary RPC on behalf of call (its sandbox_id param): the message is
 * consumed, the op is owned by call (a transport failure fails it) and done
 * gets the answer; out of memory fails the call. user may be NULL. */
void e2bw_envd_unary(e2bw_core *core, e2bw_call *call, const char *rpc, cJSON *message, const char *user,
	e2bw_http_done_fn done);

/* Appends envd's base URL for the sandbox, without a trailing slash: the
 * configured sandbox_url (routed by header), else https://49983-<id>.<domain>.
 * 0, or -1 when out of memory. */
int e2bw_envd_base_url(const e2bw_core *core, const char *sandbox_id, e2bw_buf *url);
/* 1 when the sandbox's envd is at least major.minor.patch (or its version is
 * unknown or unparsable: assume a current envd, as the SDK's debug mode). */
int e2bw_envd_at_least(const e2bw_core *core, const char *sandbox_id, int major, int minor, int patch);

/* The typed error for a non-200 envd answer (its body buffered in op). */
cJSON *e2bw_envd_status_error(const e2bw_http_op *op, const char *sandbox_id);
/* The typed error for a Connect error object {"code","message"} (an
 * end-stream error or a unary error body). */
cJSON *e2bw_connect_error(const cJSON *error, const char *what);

/* Idle limit of a stream: this many keepalive intervals without a byte. */
#define E2BW_STREAM_IDLE_INTERVALS 3

#endif
