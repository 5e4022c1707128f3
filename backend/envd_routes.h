/* The envd listener (sandbox_url). Every sandbox shares this one URL, as
 * with the SDK's sandboxUrl option, so requests are routed on the
 * E2b-Sandbox-Id header the SDK always sends, the way E2B's proxy does:
 * an unknown or paused sandbox gets the proxy's 502 JSON.
 *
 * Today only GET /health exists. Later routes (process.Process Connect-RPC,
 * filesystem.Filesystem, /files) go in the table in envd_routes.c; each
 * declares whether envd's X-Access-Token check applies, and its handler gets
 * the resolved running sandbox (its dir is where its processes run). */
#ifndef E2B_BACKEND_ENVD_ROUTES_H
#define E2B_BACKEND_ENVD_ROUTES_H

struct evhttp_request;
struct registry;
struct sandbox;

struct envd_ctx {
	struct registry *reg;
	void *process_manager; /* for later handlers; unused today */
};

/* A handler answers (or starts streaming) and returns the status it sent. */
typedef int (*envd_handler)(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

/* evhttp callback; arg is a struct envd_ctx *. */
void envd_dispatch(struct evhttp_request *req, void *arg);

#endif
