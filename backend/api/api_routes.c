/* Routing control-plane requests. */
#include "api/api_routes.h"

#include "api/api_list.h"
#include "api/api_logs.h"
#include "api/api_metrics.h"
#include "api/api_network.h"
#include "api/api_create.h"
#include "api/api_sandboxes.h"
#include "api/api_template_builds.h"
#include "api/api_templates.h"
#include "api/api_secrets.h"
#include "api/api_snapshots.h"
#include "api/api_volume_content.h"
#include "api/api_volumes.h"
#include "http/http_conns.h"
#include "http/http_head.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "http/http_route.h"
#include "http/http_server.h"
#include "lib/err.h"
#include "lib/text.h"
#include "templates/templates.h"
#include "templates/templates_exec.h"
#include "templates/templates_files.h"
#include "volumes/volumes.h"
#include "runtime/runtime.h"
#include "runtime/runtime_checkpoint.h"
#include "runtime/runtime_dynmods.h"
#include "runtime/runtime_seccomp.h"
#include "warm/warm.h"

#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void api_isolation_fields(cJSON *o)
{
	cJSON_AddStringToObject(o, "isolation", runtime_isolation_name());
	struct runtime_limits l;
	runtime_limits(&l);
	cJSON *limits = cJSON_AddObjectToObject(o, "limits");
	if (limits) {
		cJSON_AddBoolToObject(limits, "memory", l.memory);
		cJSON_AddBoolToObject(limits, "pids", l.pids);
		cJSON_AddBoolToObject(limits, "cpu", l.cpu);
		cJSON_AddBoolToObject(limits, "disk", l.disk);
		if (l.devices)
			cJSON_AddStringToObject(limits, "devices", l.devices);
		else
			cJSON_AddFalseToObject(limits, "devices");
	}
	const char *cgroup = runtime_cgroup_hierarchy();
	if (cgroup)
		cJSON_AddStringToObject(o, "cgroup", cgroup);
	else
		cJSON_AddNullToObject(o, "cgroup");
	cJSON_AddBoolToObject(o, "seccomp", runtime_seccomp_active());
	cJSON_AddBoolToObject(o, "cgroup_favor_dynmods", runtime_dynmods_active());
}

/* E2B's health check: 204, no body (its spec/openapi.yml). */
static int api_health(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)ctx, (void)id;
	return reply_empty(req, 204);
}

/* The backend's own facts, at a path of its own: how sandboxes are
 * isolated (the ready line's fields) and its warm pools. */
static int api_health_details(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	cJSON *o = cJSON_CreateObject();
	if (o) {
		api_isolation_fields(o);
		/* How pauses keep processes here: checkpoints (CRIU), or freezing
		 * and why. */
		cJSON *ckpt = cJSON_AddObjectToObject(o, "checkpoint");
		struct err why;
		bool available = runtime_checkpoint_available(&why) == 0;
		if (ckpt) {
			cJSON_AddBoolToObject(ckpt, "available", available);
			cJSON_AddStringToObject(ckpt, "pause", available ? "checkpoint" : "freeze");
			if (!available)
				cJSON_AddStringToObject(ckpt, "reason", why.msg);
		}
		cJSON *warm = cJSON_AddObjectToObject(o, "warm");
		if (warm) {
			struct warm_counts n;
			warm_counts(ctx->warm, &n);
			cJSON_AddNumberToObject(warm, "ready", (double)n.ready);
			cJSON_AddNumberToObject(warm, "size", (double)n.size);
			cJSON_AddNumberToObject(warm, "templates", (double)n.templates);
			cJSON_AddNumberToObject(warm, "templates_ready", (double)n.templates_ready);
			cJSON_AddNumberToObject(warm, "taken", (double)n.taken);
		}
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

/* DELETE /templates/{id}: E2B deletes snapshots through the template
 * route, so an id that names no built template is taken for a snapshot's
 * (whose own handler answers E2B's 404 for neither). */
static int api_template_or_snapshot_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	if (templates_find(ctx->templates->catalog, id))
		return api_templates_delete(ctx, req, id);
	return api_snapshot_delete(ctx, req, id);
}

static const struct api_route routes[] = {
	{"/health", EVHTTP_REQ_GET, "GET", false, api_health},
	{"/health/details", EVHTTP_REQ_GET, "GET", false, api_health_details},
	{"/v2/sandboxes", EVHTTP_REQ_POST, "POST", true, api_create_v2},
	{"/v2/sandboxes", EVHTTP_REQ_GET, "GET", true, api_list_v2},
	{"/v2/sandboxes/{}/connect", EVHTTP_REQ_POST, "POST", true, api_connect_v2},
	{"/v2/sandboxes/{}/logs", EVHTTP_REQ_GET, "GET", true, api_logs_v2},
	{"/sandboxes", EVHTTP_REQ_POST, "POST", true, api_create_v1},
	{"/sandboxes", EVHTTP_REQ_GET, "GET", true, api_list_v1},
	/* before /sandboxes/{}, which would take "metrics" for an ID */
	{"/sandboxes/metrics", EVHTTP_REQ_GET, "GET", true, api_sandboxes_metrics},
	{"/sandboxes/{}", EVHTTP_REQ_GET, "GET", true, api_get},
	{"/sandboxes/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_kill},
	{"/sandboxes/{}/timeout", EVHTTP_REQ_POST, "POST", true, api_set_timeout},
	{"/sandboxes/{}/refreshes", EVHTTP_REQ_POST, "POST", true, api_refresh},
	{"/sandboxes/{}/logs", EVHTTP_REQ_GET, "GET", true, api_logs_v1},
	{"/sandboxes/{}/pause", EVHTTP_REQ_POST, "POST", true, api_pause},
	{"/sandboxes/{}/resume", EVHTTP_REQ_POST, "POST", true, api_resume},
	{"/sandboxes/{}/connect", EVHTTP_REQ_POST, "POST", true, api_connect_v1},
	{"/sandboxes/{}/network", EVHTTP_REQ_PUT, "PUT", true, api_update_network},
	{"/sandboxes/{}/network", EVHTTP_REQ_POST, "POST", true, api_update_network},
	{"/sandboxes/{}/metrics", EVHTTP_REQ_GET, "GET", true, api_sandbox_metrics},
	/* Templates (api_templates.h); the upload checks its link's token instead of the key. */
	{"/v3/templates", EVHTTP_REQ_POST, "POST", true, api_templates_request},
	{"/v2/templates", EVHTTP_REQ_GET, "GET", true, api_templates_list},
	{"/templates", EVHTTP_REQ_GET, "GET", true, api_templates_list},
	{"/v2/templates/{}/builds/{}", EVHTTP_REQ_POST, "POST", true, api_templates_build_start},
	{"/templates/{}/builds/{}/status", EVHTTP_REQ_GET, "GET", true, api_templates_build_status},
	{"/templates/{}/files/{}", EVHTTP_REQ_GET, "GET", true, api_templates_file_link},
	{"/templates/{}/files/{}", EVHTTP_REQ_PUT, "PUT", false, api_templates_file_upload},
	{"/templates/tags", EVHTTP_REQ_POST, "POST", true, api_templates_tags_assign},
	{"/templates/tags", EVHTTP_REQ_DELETE, "DELETE", true, api_templates_tags_delete},
	{"/templates/aliases/{}", EVHTTP_REQ_GET, "GET", true, api_templates_alias},
	{"/templates/{}/tags", EVHTTP_REQ_GET, "GET", true, api_templates_tags_list},
	{"/templates/{}", EVHTTP_REQ_GET, "GET", true, api_templates_get},
	{"/templates/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_template_or_snapshot_delete},
	{"/sandboxes/{}/snapshots", EVHTTP_REQ_POST, "POST", true, api_snapshot_create},
	{"/sandboxes/{}/fork", EVHTTP_REQ_POST, "POST", true, api_fork},
	{"/snapshots", EVHTTP_REQ_GET, "GET", true, api_snapshot_list},
	{"/volumes", EVHTTP_REQ_POST, "POST", true, api_volume_create},
	{"/volumes", EVHTTP_REQ_GET, "GET", true, api_volume_list},
	{"/volumes/{}", EVHTTP_REQ_GET, "GET", true, api_volume_get},
	{"/volumes/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_volume_delete},
	/* Secrets: {} is a secret's ID or its name. */
	{"/secrets", EVHTTP_REQ_POST, "POST", true, api_secret_create},
	{"/secrets", EVHTTP_REQ_GET, "GET", true, api_secret_list},
	{"/secrets/{}", EVHTTP_REQ_GET, "GET", true, api_secret_get},
	{"/secrets/{}", EVHTTP_REQ_POST, "POST", true, api_secret_update},
	{"/secrets/{}", EVHTTP_REQ_DELETE, "DELETE", true, api_secret_delete},
	/* The volume content API: the volume's token, checked by the handler. */
	{"/volumecontent/{}/dir", EVHTTP_REQ_GET, "GET", false, api_volume_content_list},
	{"/volumecontent/{}/dir", EVHTTP_REQ_POST, "POST", false, api_volume_content_mkdir},
	{"/volumecontent/{}/path", EVHTTP_REQ_GET, "GET", false, api_volume_content_stat},
	{"/volumecontent/{}/path", EVHTTP_REQ_PATCH, "PATCH", false, api_volume_content_update},
	{"/volumecontent/{}/path", EVHTTP_REQ_DELETE, "DELETE", false, api_volume_content_remove},
	{"/volumecontent/{}/file", EVHTTP_REQ_GET, "GET", false, api_volume_content_read},
	{"/volumecontent/{}/file", EVHTTP_REQ_PUT, "PUT", false, api_volume_content_write},
};

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

/* The route a head asks for (NULL: none), its "{}" in id; *path_known
 * whether any route has the path. */
static const struct api_route *find_route(const struct http_head *h, char *id, size_t cap, bool *path_known)
{
	const char *path = http_head_path(h);
	*path_known = false;
	for (size_t i = 0; i < ROUTE_COUNT; i++) {
		if (!route_match(routes[i].pattern, path, id, cap))
			continue;
		*path_known = true;
		if (method_matches(routes[i].method, h->method))
			return &routes[i];
	}
	return NULL;
}

static bool key_ok(const struct api_ctx *ctx, const struct http_head *h)
{
	const char *key = http_head_find(h, "X-API-Key");
	return key && text_secret_equal(key, ctx->api_key);
}

void api_verdict(const struct http_head *head, struct http_verdict *v, void *arg)
{
	struct api_ctx *ctx = arg;
	if (head->method == EVHTTP_REQ_OPTIONS)
		return;
	char id[256];
	bool path_known;
	const struct api_route *found = find_route(head, id, sizeof id, &path_known);
	/* Nothing is read before the key is checked: the router answers at once. */
	if (!found || (found->needs_key && !key_ok(ctx, head))) {
		v->kind = HTTP_VERDICT_REFUSE;
		return;
	}
	/* A template file's upload is read whole (up to its limit) only for a
	 * link whose token checks out; any other body keeps the 1 MiB. */
	if (found->handler == api_templates_file_upload) {
		if (api_templates_upload_link_ok(http_head_path(head), http_head_query(head)))
			v->max_body = TEMPLATES_MAX_UPLOAD_BYTES;
		else
			v->kind = HTTP_VERDICT_REFUSE;
	}
	/* Likewise a volume file's content, for the volume's own token. */
	if (found->handler == api_volume_content_write) {
		const struct volume *vol = volumes_find(ctx->volumes, id);
		if (vol && volumes_authorized(ctx->volumes, vol, http_head_find(head, "Authorization")))
			v->max_body = HTTP_MAX_READ_BODY_BYTES;
		else
			v->kind = HTTP_VERDICT_REFUSE;
	}
}

static int route(struct api_ctx *ctx, struct evhttp_request *req)
{
	if (evhttp_request_get_command(req) == EVHTTP_REQ_OPTIONS)
		return reply_preflight(req);

	struct http_head head;
	http_head_of_request(req, &head);
	char id[256];
	bool path_known;
	const struct api_route *found = find_route(&head, id, sizeof id, &path_known);
	if (!found)
		return path_known ? reply_method_not_allowed(req, http_head_path(&head))
				  : reply_error(req, 404, "Not found");
	if (found->needs_key && !key_ok(ctx, &head))
		return reply_error(req, 401, "Invalid API key");
	/* Legacy IDs "<sandboxID>-<clientID>": E2B keeps the part before '-'. */
	char *dash = strchr(id, '-');
	if (dash && strstr(found->pattern, "sandboxes/{}"))
		*dash = '\0';
	return found->handler(ctx, req, id);
}

void api_dispatch(struct evhttp_request *req, void *arg)
{
	const struct http_verdict *refused = http_conns_request_begins(req);
	int status = refused ? reply_error(req, refused->status, refused->message) : route(arg, req);
	/* 0: answered later (a create waiting for its template's ready
	 * command), and logged then. */
	if (status != 0)
		request_log("api", req, status);
}
