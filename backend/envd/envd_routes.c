/* Routing envd requests to a sandbox, as E2B's proxy does, then to envd's
 * routes. */
#include "envd/envd_routes.h"

#include "envd/envd_port_proxy.h"
#include "envd/fs/fs_files_auth.h"
#include "envd/fs/fs_files_get.h"
#include "envd/fs/fs_files_post.h"
#include "envd/fs/fs_rpc.h"
#include "envd/fs/fs_watch.h"
#include "envd/process/process_rpc.h"
#include "http/http_conns.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "http/http_server.h"
#include "lib/text.h"
#include "registry/registry.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum envd_auth {
	ENVD_AUTH_NONE,  /* envd exempts /health (and /files, which checks a signature) */
	ENVD_AUTH_TOKEN  /* X-Access-Token must equal the sandbox's envdAccessToken */
};

struct envd_route {
	const char *path;
	enum evhttp_cmd_type method;
	enum envd_auth auth;
	envd_handler handler;
};

static int envd_health(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	(void)sb;
	return reply_empty(req, 204);
}

static const struct envd_route routes[] = {
	{"/health", EVHTTP_REQ_GET, ENVD_AUTH_NONE, envd_health},
	{"/files", EVHTTP_REQ_GET, ENVD_AUTH_NONE, files_get},
	{"/files", EVHTTP_REQ_POST, ENVD_AUTH_NONE, files_post},
	{"/process.Process/Start", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_start},
	{"/process.Process/Connect", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_connect},
	{"/process.Process/List", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_list},
	{"/process.Process/SendInput", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_send_input},
	{"/process.Process/SendSignal", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_send_signal},
	{"/process.Process/CloseStdin", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_close_stdin},
	{"/process.Process/Update", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, process_rpc_update},
	{"/filesystem.Filesystem/Stat", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_rpc_stat},
	{"/filesystem.Filesystem/ListDir", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_rpc_list_dir},
	{"/filesystem.Filesystem/MakeDir", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_rpc_make_dir},
	{"/filesystem.Filesystem/Move", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_rpc_move},
	{"/filesystem.Filesystem/Remove", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_rpc_remove},
	{"/filesystem.Filesystem/WatchDir", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_watch_rpc_watch_dir},
	{"/filesystem.Filesystem/CreateWatcher", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_watch_rpc_create},
	{"/filesystem.Filesystem/GetWatcherEvents", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_watch_rpc_get_events},
	{"/filesystem.Filesystem/RemoveWatcher", EVHTTP_REQ_POST, ENVD_AUTH_TOKEN, fs_watch_rpc_remove},
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
 * E2B's proxy wants it; 0 when it may pass, else the 403 sent. */
static int check_traffic_token(struct evhttp_request *req, const struct sandbox *sb)
{
	if (!sb->traffic_token[0])
		return 0;
	const char *got = evhttp_find_header(evhttp_request_get_input_headers(req),
		ENVD_TRAFFIC_TOKEN_HEADER);
	if (got && text_secret_equal(got, sb->traffic_token))
		return 0;
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddStringToObject(body, "sandboxId", sb->id);
		cJSON_AddStringToObject(body, "message", got && *got
			? "Sandbox is secured with traffic access token. Provided token is invalid."
			: "Sandbox is secured with traffic access token. Token header '"
			  ENVD_TRAFFIC_TOKEN_HEADER "' is missing");
		cJSON_AddNumberToObject(body, "code", 403);
	}
	return reply_json(req, 403, body);
}

/* A port number of at most 5 digits; -1 otherwise. */
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
	return v;
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

/* Finds the sandbox ID and port the request is for. 0 on success, else the
 * status of the answer it sent. */
static int target(struct evhttp_request *req, char *id, size_t cap, long *port)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	char name[256];
	host_name(evhttp_find_header(in, "Host"), name, sizeof name);
	if (header_routed(name)) {
		const char *hid = evhttp_find_header(in, "E2b-Sandbox-Id");
		if (!hid || !*hid)
			return reply_error(req, 400, "Missing E2b-Sandbox-Id header");
		const char *hport = evhttp_find_header(in, "E2b-Sandbox-Port");
		*port = hport ? parse_port(hport, strlen(hport)) : ENVD_PORT;
		if (*port < 0)
			return reply_error(req, 400, "Invalid E2b-Sandbox-Port header");
		snprintf(id, cap, "%s", hid);
		return 0;
	}
	/* "<port>-<sandboxID>[-<clientID>].<domain>" */
	const char *dot = strchr(name, '.');
	const char *dash = dot ? memchr(name, '-', (size_t)(dot - name)) : NULL;
	if (!dash || dash + 1 >= dot)
		return reply_error(req, 400, "Invalid host: expected <port>-<sandboxID>.<domain>");
	*port = parse_port(name, (size_t)(dash - name));
	if (*port < 0)
		return reply_error(req, 400, "Invalid sandbox port in host");
	const char *id_start = dash + 1;
	const char *id_end = memchr(id_start, '-', (size_t)(dot - id_start));
	if (!id_end)
		id_end = dot;
	snprintf(id, cap, "%.*s", (int)(id_end - id_start), id_start);
	return 0;
}

/* A signed /files URL from the SDK when one sandbox_url serves every
 * sandbox names no sandbox (no header, IP host): the signature does. */
static bool signed_files_url(struct evhttp_request *req)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	char name[256];
	host_name(evhttp_find_header(in, "Host"), name, sizeof name);
	const char *q = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
	return header_routed(name) && !evhttp_find_header(in, "E2b-Sandbox-Id") &&
	       strcmp(request_path(req), "/files") == 0 && q && strstr(q, "signature=");
}

/* envd's routes for the sandbox the request is for (id; sb when known). */
static int serve(struct envd_ctx *ctx, struct evhttp_request *req, const char *id,
	struct sandbox *sb, long port)
{
	if (!sb || sb->state != SANDBOX_RUNNING)
		return reply_sandbox_not_found(req, id);
	if (port != ENVD_PORT) {
		int refused = check_traffic_token(req, sb);
		return refused ? refused : port_proxy_start(ctx, req, sb, port);
	}

	const char *path = request_path(req);
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	/* The listener takes upload-sized bodies; every other route keeps the
	 * shared limit. */
	if (strcmp(path, "/files") != 0 &&
	    evbuffer_get_length(evhttp_request_get_input_buffer(req)) > HTTP_MAX_BODY_BYTES)
		return reply_error(req, 413, "Request body too large");
	const struct envd_route *found = NULL;
	bool path_known = false;
	for (size_t i = 0; i < sizeof routes / sizeof routes[0] && !found; i++) {
		if (strcmp(routes[i].path, path) != 0)
			continue;
		path_known = true;
		if (routes[i].method == method ||
		    (routes[i].method == EVHTTP_REQ_GET && method == EVHTTP_REQ_HEAD))
			found = &routes[i];
	}
	if (!found) {
		if (path_known)
			evhttp_add_header(evhttp_request_get_output_headers(req), "Allow",
				strcmp(path, "/health") == 0 ? "GET, HEAD" : "POST");
		return path_known ? reply_error(req, 405, "Method not allowed")
				  : reply_error(req, 404, "Not found");
	}

	if (found->auth == ENVD_AUTH_TOKEN && sb->secure) {
		const char *token = evhttp_find_header(evhttp_request_get_input_headers(req),
			"X-Access-Token");
		if (!token || !text_secret_equal(token, sb->access_token))
			return reply_error(req, 401,
				"unauthorized access, please provide a valid access token or method signing if supported");
	}
	return found->handler(ctx, req, sb);
}

static int route(struct envd_ctx *ctx, struct evhttp_request *req)
{
	if (evhttp_request_get_command(req) == EVHTTP_REQ_OPTIONS)
		return reply_preflight(req);

	char id[128];
	long port = ENVD_PORT;
	struct sandbox *sb = NULL;
	if (signed_files_url(req)) {
		sb = files_auth_find_signer(ctx->reg, req);
		if (!sb)
			return reply_error(req, 401, "invalid signature");
		snprintf(id, sizeof id, "%s", sb->id);
	} else {
		int status = target(req, id, sizeof id, &port);
		if (status)
			return status;
		/* Proxy first, envd second: an unreachable sandbox is a 502 on any path. */
		sb = registry_find(ctx->reg, id);
	}
	return serve(ctx, req, id, sb, port);
}

void envd_dispatch(struct evhttp_request *req, void *arg)
{
	http_conns_request_begins(req);
	int status = route(arg, req);
	if (status != ENVD_STATUS_PENDING)
		request_log("envd", req, status);
}

void envd_dispatch_sandbox(struct envd_ctx *ctx, struct evhttp_request *req, const char *id)
{
	http_conns_request_begins(req);
	/* The listener names the sandbox: no routing header, no Host rules. */
	int status = evhttp_request_get_command(req) == EVHTTP_REQ_OPTIONS
		? reply_preflight(req)
		: serve(ctx, req, id, registry_find(ctx->reg, id), ENVD_PORT);
	if (status != ENVD_STATUS_PENDING)
		request_log("envd", req, status);
}
