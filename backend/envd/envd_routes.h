/* The envd listener (sandbox_url). Every sandbox shares this one URL, as
 * with the SDK's sandboxUrl option, so requests are routed the way E2B's
 * proxy does it (reference §2): on the E2b-Sandbox-Id (and optional
 * E2b-Sandbox-Port) headers when the Host is an IP literal, localhost or
 * sandbox.<domain>; otherwise on the Host's left-most label
 * "<port>-<sandboxID>". An unknown or paused sandbox gets the proxy's 502
 * JSON; a port other than envd's 49983 gets the proxy's "port is not open"
 * 502.
 *
 * Routes: GET /health and the process.Process Connect-RPC service
 * (process_rpc.h). Each route declares whether envd's X-Access-Token check
 * applies; its handler gets the resolved running sandbox. */
#ifndef E2B_BACKEND_ENVD_ROUTES_H
#define E2B_BACKEND_ENVD_ROUTES_H

struct event_base;
struct evhttp_request;
struct registry;
struct sandbox;

#define ENVD_PORT 49983

struct envd_ctx {
	struct registry *reg;
	void *process_manager; /* struct proc_manager (process_manager.h) */
	struct event_base *base;
	void *watchers;        /* struct fs_watchers (fs_watch.h) */
};

/* A handler answers (or starts streaming) and returns the status it sent,
 * or ENVD_STATUS_PENDING when it answers later (and logs the request then). */
#define ENVD_STATUS_PENDING 0
typedef int (*envd_handler)(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

/* evhttp callback; arg is a struct envd_ctx *. */
void envd_dispatch(struct evhttp_request *req, void *arg);
/* The same for a listener that serves one sandbox's envd (envd_listener.h):
 * every request goes to sandbox id, whatever its headers say. */
void envd_dispatch_sandbox(struct envd_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
