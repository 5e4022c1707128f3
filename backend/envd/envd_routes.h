/* envd/ — the envd surface (sandbox_url, and each sandbox's own port):
 * what E2B's proxy and envd answer.
 * Owns: routing requests to a sandbox and a route (envd_routes.c), each
 * sandbox's own listener (envd_listener.c), the proxy to the sandbox's
 * other ports (envd_port_proxy.c), and below them the two services:
 * envd/process/ (process.Process) and envd/fs/ (filesystem.Filesystem and
 * /files).
 * May call: envd/process/, envd/fs/, registry/, runtime/, http/, lib/.
 * Never api/.
 *
 * This file's router: every sandbox shares one URL, as with the SDK's
 * sandboxUrl option, so requests are routed the way E2B's proxy does it
 * (docs/e2b-protocol-notes.md, "Reaching envd"): on the E2b-Sandbox-Id (and
 * optional E2b-Sandbox-Port) headers when the Host is an IP literal,
 * localhost or sandbox.<domain>; otherwise on the Host's left-most label
 * "<port>-<sandboxID>". An unknown or paused sandbox gets the proxy's 502
 * JSON; a port other than envd's 49983 goes to the port proxy. Each route
 * declares whether envd's X-Access-Token check applies; its handler gets
 * the resolved running sandbox, and its service's context: the process
 * manager for envd/process/'s, struct fs_ctx for envd/fs/'s. */
#ifndef E2B_BACKEND_ENVD_ROUTES_H
#define E2B_BACKEND_ENVD_ROUTES_H

#include "envd/fs/fs_ctx.h"
#include "http/http_gate.h"

#include <stdint.h>

struct event_base;
struct evhttp_request;
struct proc_manager;
struct registry;
struct sandbox;

#define ENVD_PORT 49983
/* The header E2B's proxy wants on a sandbox with network.allowPublicTraffic false. */
#define ENVD_TRAFFIC_TOKEN_HEADER "e2b-traffic-access-token"

struct envd_ctx {
	struct registry *reg;
	struct proc_manager *process_manager; /* envd/process/'s handlers get it */
	struct event_base *base;
	struct fs_ctx fs;          /* envd/fs/'s handlers get it */
	long proxy_idle_timeout_s; /* a proxied connection silent both ways (--proxy-idle-timeout) */
	/* A request reached a paused sandbox: resume it if its lifecycle says
	 * so (lifecycle.autoResume); 0 when it now runs. NULL: never. */
	int (*wake)(void *wake_ctx, struct sandbox *sb);
	void *wake_ctx;
};

/* A handler answers (or starts streaming) and returns the status it sent,
 * or ENVD_STATUS_PENDING when it answers later (and logs the request then). */
#define ENVD_STATUS_PENDING 0
typedef int (*envd_handler)(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

/* evhttp callback; arg is a struct envd_ctx *. */
void envd_dispatch(struct evhttp_request *req, void *arg);
/* The gate's verdict on a head (arg: struct envd_ctx *): a request that
 * names no running sandbox, no route or lacks its token or signature is
 * answered before its body is read; an upload's body streams to its file
 * (STREAM), another port's to the port (RAW); anything else may send 1 MiB. */
void envd_verdict(const struct http_head *head, struct http_verdict *v, void *arg);
/* The same for a listener that serves one sandbox's envd (envd_listener.h):
 * every request goes to sandbox id, whatever its headers say. */
void envd_dispatch_sandbox(struct envd_ctx *ctx, struct evhttp_request *req, const char *id);
void envd_verdict_sandbox(struct envd_ctx *ctx, const struct http_head *head, struct http_verdict *v,
	const char *id);

#endif
