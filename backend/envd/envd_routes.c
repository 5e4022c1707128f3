/* Routing envd requests to a sandbox, as E2B's proxy does, then to envd's
 * routes. */
#include "envd/envd_routes.h"

#include "envd/envd_port_proxy.h"
#include "envd/fs/fs_files_auth.h"
#include "envd/fs/fs_files_get.h"
#include "envd/fs/fs_files_post.h"
#include "envd/fs/fs_rpc.h"
#include "envd/fs/fs_watch.h"
#include "envd/fs/fs_watch_queue.h"
#include "envd/process/process_rpc.h"
#include "http/http_conns.h"
#include "http/http_head.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/err.h"
#include "lib/query.h"
#include "lib/text.h"
#include "registry/registry.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum envd_auth {
	ENVD_AUTH_NONE, /* envd exempts /health (and /files, which checks a signature) */
	ENVD_AUTH_TOKEN /* X-Access-Token must equal the sandbox's envdAccessToken */
};

/* A service's handler answering later is the router's (envd_dispatch) too. */
_Static_assert(FS_STATUS_PENDING == ENVD_STATUS_PENDING, "one pending status");

/* One of handler, process and fs is set: the router's own handler, or a
 * service's, which gets that service's context. */
struct envd_route {
	const char *path;
	enum evhttp_cmd_type method;
	enum envd_auth auth;
	envd_handler handler;
	process_rpc_handler process;
	fs_handler fs;
};

static int envd_health(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	(void)sb;
	return reply_empty(req, 204);
}

static const struct envd_route routes[] = {
	{"/health", EVHTTP_REQ_GET, ENVD_AUTH_NONE, .handler = envd_health},
	{"/files", EVHTTP_REQ_GET, ENVD_AUTH_NONE, .fs = files_get},
	{"/files", EVHTTP_REQ_POST, ENVD_AUTH_NONE, .fs = files_post},
	{"/process.Process/Start", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_start},
	{"/process.Process/Connect", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_connect},
	{"/process.Process/List", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_list},
	{"/process.Process/SendInput", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_send_input},
	{"/process.Process/SendSignal", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_send_signal},
	{"/process.Process/CloseStdin", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_close_stdin},
	{"/process.Process/Update", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .process = process_rpc_update},
	{"/filesystem.Filesystem/Stat", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_rpc_stat},
	{"/filesystem.Filesystem/ListDir", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_rpc_list_dir},
	{"/filesystem.Filesystem/MakeDir", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_rpc_make_dir},
	{"/filesystem.Filesystem/Move", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_rpc_move},
	{"/filesystem.Filesystem/Remove", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_rpc_remove},
	{"/filesystem.Filesystem/WatchDir", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_watch_rpc_watch_dir},
	{"/filesystem.Filesystem/CreateWatcher", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_watch_rpc_create},
	{"/filesystem.Filesystem/GetWatcherEvents", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN,
		.fs = fs_watch_rpc_get_events},
	{"/filesystem.Filesystem/RemoveWatcher", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, .fs = fs_watch_rpc_remove},
};

/* The proxy's answers for a sandbox it cannot reach
 * (docs/e2b-protocol-notes.md, "Reaching envd"). */
static int reply_sandbox_not_found(struct evhttp_request *req, const char *id)
{
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddStringToObject(body, "sandboxId", id);
		cJSON_AddStringToObject(body, "message", "The sandbox was not found");
		cJSON_AddNumberToObject(body, "code", 502);
	}
	return reply_json(req, 502, body);
}

/* network.allowPublicTraffic false: a request for any port but envd's
 * (which has its own token) must carry the sandbox's traffic token, as
 * E2B's proxy wants it. */
static bool traffic_token_ok(const struct http_head *h, const struct sandbox *sb)
{
	if (!sb->traffic_token[0])
		return true;
	const char *got = http_head_find(h, ENVD_TRAFFIC_TOKEN_HEADER);
	return got && text_secret_equal(got, sb->traffic_token);
}

static int reply_bad_traffic_token(struct evhttp_request *req, const char *id)
{
	const char *got =
		evhttp_find_header(evhttp_request_get_input_headers(req), ENVD_TRAFFIC_TOKEN_HEADER);
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddStringToObject(body, "sandboxId", id);
		cJSON_AddStringToObject(body, "message",
			got && *got
				? "Sandbox is secured with traffic access token. Provided token is invalid."
				: "Sandbox is secured with traffic access token. Token header '" ENVD_TRAFFIC_TOKEN_HEADER
				  "' is missing");
		cJSON_AddNumberToObject(body, "code", 403);
	}
	return reply_json(req, 403, body);
}

/* A port number 1..65535 in at most 5 digits; -1 otherwise (a longer one
 * must never be cut down to 16 bits). */
static long parse_port(const char *s, size_t n)
{
	if (n == 0 || n > 5)
		return -1;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? v : -1;
}

/* The Host header's name, lowercased, without port or IPv6 brackets. */
static void host_name(const char *host, char *out, size_t cap)
{
	size_t n = 0;
	if (host && host[0] == '[') {
		for (host++; *host && *host != ']' && n + 1 < cap; host++)
			out[n++] = *host;
	} else if (host) {
		const char *colon = strchr(host, ':');
		bool bare_v6 = colon && strchr(colon + 1, ':');
		for (; *host && (bare_v6 || *host != ':') && n + 1 < cap; host++)
			out[n++] = (char)(*host >= 'A' && *host <= 'Z' ? *host + 32 : *host);
	}
	out[n] = '\0';
}

static bool header_routed(const char *name)
{
	unsigned char addr[16];
	return !*name || strcmp(name, "localhost") == 0 || inet_pton(AF_INET, name, addr) == 1 ||
		inet_pton(AF_INET6, name, addr) == 1 || (strncmp(name, "sandbox.", 8) == 0 && name[8]);
}

/* Where a request goes, worked out from its head alone: the same answer
 * before its body is read (the gate's verdict) and once it is dispatched. */
enum envd_failure {
	ENVD_OK,
	ENVD_BAD_ROUTING,     /* 400 with message */
	ENVD_BAD_SIGNATURE,   /* 401: a signed URL that names no sandbox matches none */
	ENVD_NO_SANDBOX,      /* 502: unknown or paused */
	ENVD_NO_PATH,         /* 404 */
	ENVD_BAD_METHOD,      /* 405 */
	ENVD_NO_TOKEN,        /* 401 */
	ENVD_NO_TRAFFIC_TOKEN /* 403: another port without the traffic token */
};

struct envd_target {
	enum envd_failure failure;
	const char *message; /* ENVD_BAD_ROUTING */
	char id[128];
	struct sandbox *sb;
	long port;
	const struct envd_route *route; /* NULL for another port */
};

/* The sandbox ID and port from the routing headers or the Host. */
static enum envd_failure find_target(const struct http_head *h, struct envd_target *t)
{
	char name[256];
	host_name(http_head_find(h, "Host"), name, sizeof name);
	if (header_routed(name)) {
		const char *hid = http_head_find(h, "E2b-Sandbox-Id");
		const char *hport = http_head_find(h, "E2b-Sandbox-Port");
		t->message = "Missing E2b-Sandbox-Id header";
		if (!hid || !*hid)
			return ENVD_BAD_ROUTING;
		t->port = hport ? parse_port(hport, strlen(hport)) : ENVD_PORT;
		t->message = "Invalid E2b-Sandbox-Port header";
		if (t->port < 0)
			return ENVD_BAD_ROUTING;
		snprintf(t->id, sizeof t->id, "%s", hid);
		return ENVD_OK;
	}
	/* "<port>-<sandboxID>[-<clientID>].<domain>" */
	const char *dot = strchr(name, '.');
	const char *dash = dot ? memchr(name, '-', (size_t)(dot - name)) : NULL;
	t->message = "Invalid host: expected <port>-<sandboxID>.<domain>";
	if (!dash || dash + 1 >= dot)
		return ENVD_BAD_ROUTING;
	t->port = parse_port(name, (size_t)(dash - name));
	t->message = "Invalid sandbox port in host";
	if (t->port < 0)
		return ENVD_BAD_ROUTING;
	const char *id_start = dash + 1;
	const char *id_end = memchr(id_start, '-', (size_t)(dot - id_start));
	if (!id_end)
		id_end = dot;
	snprintf(t->id, sizeof t->id, "%.*s", (int)(id_end - id_start), id_start);
	return ENVD_OK;
}

/* A signed /files URL from the SDK when one sandbox_url serves every
 * sandbox names no sandbox (no header, IP host): the signature does. */
static bool signed_files_url(const struct http_head *h)
{
	char name[256];
	host_name(http_head_find(h, "Host"), name, sizeof name);
	const char *q = http_head_query(h);
	return header_routed(name) && !http_head_find(h, "E2b-Sandbox-Id") &&
		strcmp(http_head_path(h), "/files") == 0 && q && strstr(q, "signature=");
}

/* envd's route and token check for a running sandbox's port 49983. */
static enum envd_failure find_route(const struct http_head *h, struct envd_target *t)
{
	const char *path = http_head_path(h);
	bool path_known = false;
	for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !t->route; i++) {
		if (strcmp(routes[i].path, path) != 0)
			continue;
		path_known = true;
		if (routes[i].method == h->method ||
			(routes[i].method == EVHTTP_REQ_GET && h->method == EVHTTP_REQ_HEAD))
			t->route = &routes[i];
	}
	if (!t->route)
		return path_known ? ENVD_BAD_METHOD : ENVD_NO_PATH;
	if (t->route->auth == ENVD_AUTH_TOKEN && t->sb->secure) {
		const char *token = http_head_find(h, "X-Access-Token");
		if (!token || !text_secret_equal(token, t->sb->access_token))
			return ENVD_NO_TOKEN;
	}
	return ENVD_OK;
}

/* /files checks its token or signature itself; before the body, too. */
static bool files_allowed(const struct envd_target *t, const struct http_head *h)
{
	struct query q;
	if (query_parse(http_head_query(h), &q) != 0)
		return false;
	struct err why;
	bool ok = files_auth_check(t->sb, h, &q, h->method == EVHTTP_REQ_POST ? "write" : "read", &why) == 0;
	query_free(&q);
	return ok;
}

/* lifecycle.autoResume: a request that may reach the paused sandbox (its
 * route, token, signature or traffic token all good) wakes it first. */
static void wake(struct envd_ctx *ctx, const struct http_head *h, struct envd_target *t)
{
	bool files = t->route && (t->route->fs == files_post || t->route->fs == files_get);
	if (t->failure || (files && !files_allowed(t, h)) || ctx->wake(ctx->wake_ctx, t->sb) != 0)
		t->failure = t->failure ? t->failure : ENVD_NO_SANDBOX;
}

/* fixed_id: the sandbox of a listener of its own (no routing headers). */
static void resolve(struct envd_ctx *ctx, const struct http_head *h, const char *fixed_id,
	struct envd_target *t)
{
	memset(t, 0, sizeof *t);
	t->port = ENVD_PORT;
	if (fixed_id) {
		snprintf(t->id, sizeof t->id, "%s", fixed_id);
		t->sb = registry_find(ctx->reg, fixed_id);
	} else if (signed_files_url(h)) {
		t->sb = files_auth_find_signer(ctx->reg, h);
		if (!t->sb) {
			t->failure = ENVD_BAD_SIGNATURE;
			return;
		}
		snprintf(t->id, sizeof t->id, "%s", t->sb->id);
	} else {
		t->failure = find_target(h, t);
		if (t->failure)
			return;
		/* Proxy first, envd second: an unreachable sandbox is a 502 on any path. */
		t->sb = registry_find(ctx->reg, t->id);
	}
	/* Activity wakes a sandbox whose lifecycle says so: its envd's or a port's. */
	bool waking = t->sb && t->sb->state == SANDBOX_PAUSED && t->sb->auto_resume && ctx->wake;
	if (!t->sb || (t->sb->state != SANDBOX_RUNNING && !waking))
		t->failure = ENVD_NO_SANDBOX;
	else if (t->port == ENVD_PORT)
		t->failure = find_route(h, t);
	else if (!traffic_token_ok(h, t->sb))
		t->failure = ENVD_NO_TRAFFIC_TOKEN;
	if (waking)
		wake(ctx, h, t);
}

static int reply_failure(struct evhttp_request *req, const struct envd_target *t)
{
	switch (t->failure) {
	case ENVD_BAD_ROUTING:
		return reply_error(req, 400, t->message);
	case ENVD_BAD_SIGNATURE:
		return reply_error(req, 401, "invalid signature");
	case ENVD_NO_SANDBOX:
		return reply_sandbox_not_found(req, t->id);
	case ENVD_NO_TRAFFIC_TOKEN:
		return reply_bad_traffic_token(req, t->id);
	case ENVD_BAD_METHOD:
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
			strcmp(request_path(req), "/health") == 0 ? "GET, HEAD" : "POST");
		return reply_error(req, 405, "Method not allowed");
	case ENVD_NO_TOKEN:
		return reply_error(req, 401,
			"unauthorized access, please provide a valid access token or method signing if supported");
	default:
		return reply_error(req, 404, "Not found");
	}
}

static void verdict(struct envd_ctx *ctx, const struct http_head *h, struct http_verdict *v,
	const char *fixed_id)
{
	if (h->method == EVHTTP_REQ_OPTIONS)
		return;
	struct envd_target t;
	resolve(ctx, h, fixed_id, &t);
	if (t.failure) {
		v->kind = HTTP_VERDICT_REFUSE;
		return;
	}
	snprintf(v->sandbox, sizeof v->sandbox, "%s", t.sb->id);
	if (!t.route) {
		v->kind = HTTP_VERDICT_RAW; /* the port proxy forwards the body as it comes */
	} else if (t.route->fs == files_post || t.route->fs == files_get) {
		if (!files_allowed(&t, h))
			v->kind = HTTP_VERDICT_REFUSE;
		else if (t.route->fs == files_post)
			*v = (struct http_verdict){.kind = HTTP_VERDICT_STREAM,
				.max_body = ctx->fs.max_upload_bytes};
		snprintf(v->sandbox, sizeof v->sandbox, "%s", t.sb->id);
	}
}

void envd_verdict(const struct http_head *head, struct http_verdict *v, void *arg)
{
	verdict(arg, head, v, NULL);
}

void envd_verdict_sandbox(struct envd_ctx *ctx, const struct http_head *head, struct http_verdict *v,
	const char *id)
{
	verdict(ctx, head, v, id);
}

static int serve(struct envd_ctx *ctx, struct evhttp_request *req, const char *fixed_id)
{
	const struct http_verdict *refused = http_conns_request_begins(req);
	if (refused)
		return reply_error(req, refused->status, refused->message);
	if (evhttp_request_get_command(req) == EVHTTP_REQ_OPTIONS)
		return reply_preflight(req);
	struct http_head head;
	http_head_of_request(req, &head);
	struct envd_target t;
	resolve(ctx, &head, fixed_id, &t);
	if (t.failure)
		return reply_failure(req, &t);
	if (!t.route)
		return port_proxy_start(ctx, req, t.sb, t.port);
	if (t.route->process)
		return t.route->process(ctx->process_manager, req, t.sb);
	if (t.route->fs)
		return t.route->fs(&ctx->fs, req, t.sb);
	return t.route->handler(ctx, req, t.sb);
}

void envd_dispatch(struct evhttp_request *req, void *arg)
{
	int status = serve(arg, req, NULL);
	if (status != ENVD_STATUS_PENDING)
		request_log("envd", req, status);
}

void envd_dispatch_sandbox(struct envd_ctx *ctx, struct evhttp_request *req, const char *id)
{
	/* The listener names the sandbox: no routing header, no Host rules. */
	int status = serve(ctx, req, id);
	if (status != ENVD_STATUS_PENDING)
		request_log("envd", req, status);
}
