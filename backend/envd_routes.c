/* Routing envd requests to the sandbox named by E2b-Sandbox-Id. */
#include "envd_routes.h"

#include "http_reply.h"
#include "registry.h"
#include "text.h"

#include <cJSON.h>
#include <event2/http.h>
#include <stdbool.h>
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
};

/* The proxy's answer for a sandbox it cannot reach (reference §2). */
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

static int route(struct envd_ctx *ctx, struct evhttp_request *req)
{
	if (evhttp_request_get_command(req) == EVHTTP_REQ_OPTIONS)
		return reply_preflight(req);

	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *id = evhttp_find_header(in, "E2b-Sandbox-Id");
	if (!id || !*id)
		return reply_error(req, 400, "Missing E2b-Sandbox-Id header");
	/* Proxy first, envd second: an unreachable sandbox is a 502 on any path. */
	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb || sb->state != SANDBOX_RUNNING)
		return reply_sandbox_not_found(req, id);

	const char *path = request_path(req);
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
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
	if (!found)
		return path_known ? reply_error(req, 405, "Method not allowed")
				  : reply_error(req, 404, "Not found");

	if (found->auth == ENVD_AUTH_TOKEN && sb->secure) {
		const char *token = evhttp_find_header(in, "X-Access-Token");
		if (!token || !text_secret_equal(token, sb->access_token))
			return reply_error(req, 401,
				"unauthorized access, please provide a valid access token or method signing if supported");
	}
	return found->handler(ctx, req, sb);
}

void envd_dispatch(struct evhttp_request *req, void *arg)
{
	int status = route(arg, req);
	log_request("envd", req, status);
}
