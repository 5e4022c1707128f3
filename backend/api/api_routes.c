/* Routing control-plane requests. */
#include "api/api_routes.h"

#include "api/api_list.h"
#include "api/api_network.h"
#include "api/api_sandboxes.h"
#include "api/api_snapshots.h"
#include "api/api_volume_content.h"
#include "api/api_volumes.h"
#include "http/http_server.h"
#include "http/http_conns.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "http/http_route.h"
#include "lib/text.h"
#include "runtime/runtime.h"
#include "runtime/runtime_seccomp.h"

#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int api_health(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)ctx;
	(void)id;
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "isolation", runtime_isolation_name());
		cJSON_AddBoolToObject(o, "limits", runtime_limits());
		cJSON_AddBoolToObject(o, "seccomp", runtime_seccomp_active());
	}
	return reply_json(req, 200, o);
}

struct api_route {
	const char *pattern;
	enum evhttp_cmd_type method;
	const char *method_name;
	bool needs_key;
	api_handler handler;
};

static const struct api_route routes[] = {
	{"/health", EVHTTP_REQ_GET, "GET", false, api_health},
	{"/v2/sandboxes", EVHTTP_REQ_POST, "POST", true, api_create_v2},
	{"/v2/sandboxes", EVHTTP_REQ_GET, "GET", true, api_list_v2},
	{"/v2/sandboxes/{}/connect", EVHTTP_REQ_POST, "POST", true, api_connect_v2},
	{"/sandboxes", EVHTTP_REQ_POST, "POST", true, api_create_v1},
	{"/sandboxes", EVHTTP_REQ_GET, "GET", true, api_list_v1},
	{"/sandboxes/{}", EVHTTP_REQ_GET, "GET", true, api_get},
	{"/sandboxes/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_kill},
	{"/sandboxes/{}/timeout", EVHTTP_REQ_POST, "POST", true, api_set_timeout},
	{"/sandboxes/{}/pause", EVHTTP_REQ_POST, "POST", true, api_pause},
	{"/sandboxes/{}/resume", EVHTTP_REQ_POST, "POST", true, api_resume},
	{"/sandboxes/{}/connect", EVHTTP_REQ_POST, "POST", true, api_connect_v1},
	{"/sandboxes/{}/network", EVHTTP_REQ_PUT, "PUT", true, api_update_network},
	{"/sandboxes/{}/network", EVHTTP_REQ_POST, "POST", true, api_update_network},
	{"/sandboxes/{}/snapshots", EVHTTP_REQ_POST, "POST", true, api_snapshot_create},
	{"/sandboxes/{}/fork", EVHTTP_REQ_POST, "POST", true, api_fork},
	{"/snapshots", EVHTTP_REQ_GET, "GET", true, api_snapshot_list},
	{"/templates/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_snapshot_delete},
	{"/volumes", EVHTTP_REQ_POST, "POST", true, api_volume_create},
	{"/volumes", EVHTTP_REQ_GET, "GET", true, api_volume_list},
	{"/volumes/{}", EVHTTP_REQ_GET, "GET", true, api_volume_get},
	{"/volumes/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_volume_delete},
	/* The volume content API: the volume's token, checked by the handler. */
	{"/volumecontent/{}/dir", EVHTTP_REQ_GET, "GET", false, api_volume_content_list},
	{"/volumecontent/{}/dir", EVHTTP_REQ_POST, "POST", false, api_volume_content_mkdir},
	{"/volumecontent/{}/path", EVHTTP_REQ_GET, "GET", false, api_volume_content_stat},
	{"/volumecontent/{}/path", EVHTTP_REQ_PATCH, "PATCH", false, api_volume_content_update},
	{"/volumecontent/{}/path", EVHTTP_REQ_DELETE, "DELETE", false, api_volume_content_remove},
	{"/volumecontent/{}/file", EVHTTP_REQ_GET, "GET", false, api_volume_content_read},
	{"/volumecontent/{}/file", EVHTTP_REQ_PUT, "PUT", false, api_volume_content_write},
};

/* The one route whose body may be upload-sized (the listener takes
 * API_MAX_UPLOAD_BYTES); every other keeps HTTP_MAX_BODY_BYTES. */
static bool takes_uploads(const struct api_route *r)
{
	return r->handler == api_volume_content_write;
}

#define ROUTE_COUNT (sizeof routes / sizeof routes[0])

static bool method_matches(enum evhttp_cmd_type route, enum evhttp_cmd_type asked)
{
	return route == asked || (route == EVHTTP_REQ_GET && asked == EVHTTP_REQ_HEAD);
}

/* 405 with an Allow header listing what the path does accept. */
static int reply_method_not_allowed(struct evhttp_request *req, const char *path)
{
	char allow[96] = "OPTIONS";
	char unused[8];
	for (size_t i = 0; i < ROUTE_COUNT; i++) {
		if (!route_match(routes[i].pattern, path, unused, sizeof unused))
			continue;
		size_t len = strlen(allow);
		snprintf(allow + len, sizeof allow - len, ", %s", routes[i].method_name);
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
	return reply_error(req, 405, "Method not allowed");
}

static int route(struct api_ctx *ctx, struct evhttp_request *req)
{
	if (evhttp_request_get_command(req) == EVHTTP_REQ_OPTIONS)
		return reply_preflight(req);

	const char *path = request_path(req);
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	char id[256];
	const struct api_route *found = NULL;
	bool path_known = false;
	for (size_t i = 0; i < ROUTE_COUNT && !found; i++) {
		if (!route_match(routes[i].pattern, path, id, sizeof id))
			continue;
		path_known = true;
		if (method_matches(routes[i].method, method))
			found = &routes[i];
	}
	if (!found)
		return path_known ? reply_method_not_allowed(req, path) : reply_error(req, 404, "Not found");

	if (!takes_uploads(found) &&
	    evbuffer_get_length(evhttp_request_get_input_buffer(req)) > HTTP_MAX_BODY_BYTES)
		return reply_error(req, 413, "Request body too large");
	if (found->needs_key) {
		const char *key = evhttp_find_header(evhttp_request_get_input_headers(req), "X-API-Key");
		if (!key || !text_secret_equal(key, ctx->api_key))
			return reply_error(req, 401, "Invalid API key");
	}
	/* Legacy IDs "<sandboxID>-<clientID>": E2B keeps the part before '-'. */
	char *dash = strchr(id, '-');
	if (dash && strstr(found->pattern, "sandboxes/{}"))
		*dash = '\0';
	return found->handler(ctx, req, id);
}

void api_dispatch(struct evhttp_request *req, void *arg)
{
	http_conns_request_begins(req);
	int status = route(arg, req);
	if (status != API_STATUS_PENDING)
		request_log("api", req, status);
}
