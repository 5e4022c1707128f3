/* Snapshots and forks (api_snapshots.h). */
#include "api/api_snapshots.h"

#include "api/api_sandbox_json.h"
#include "api/api_sandboxes.h"
#include "lib/err.h"
#include "runtime/runtime.h"
#include "http/http_body.h"
#include "http/http_field.h"
#include "http/http_parked.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/crashpoint.h"
#include "lib/query.h"
#include "lib/tree_remove.h"
#include "registry/registry.h"
#include "snapshots/snapshots.h"
#include "snapshots/snapshots_capture.h"
#include "templates/templates_stack.h"

#include <limits.h>
#include <cJSON.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_LIMIT_DEFAULT 100
#define FORK_TIMEOUT_DEFAULT 15

static int reply_not_found(struct evhttp_request *req, const char *id)
{
	return reply_errorf(req, 404, "Sandbox \"%s\" doesn't exist or you don't have access to it", id);
}

/* A capture in progress (sealed in a helper, snapshots_capture.h). */
struct pending {
	struct api_ctx *ctx;
	struct http_parked parked;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	struct snapshot_ref name; /* snapshots: the name asked for (name[0] == 0: none) */
	int count;                /* forks: how many */
	int64_t timeout_s;
	char image[4200]; /* forks: the source's processes (registry_fork_image), "" none */
	struct err why;   /* why not, when image is "" (status 0) */
};

static void finish(struct pending *p, struct evhttp_request *req, int status)
{
	if (p->image[0])
		tree_remove(p->image);
	if (req)
		request_log("api", req, status);
	free(p);
}

static cJSON *snapshot_info(const struct snapshot *s)
{
	char id[SNAPSHOTS_ID_TEXT_MAX];
	snapshots_id_of(s, id);
	cJSON *o = cJSON_CreateObject(), *names = cJSON_CreateArray();
	if (s->name)
		cJSON_AddItemToArray(names, cJSON_CreateString(id));
	cJSON_AddStringToObject(o, "snapshotID", id);
	cJSON_AddItemToObject(o, "names", names);
	return o;
}

/* Starts capturing sandbox id for p (snapshot or fork); the status answered
 * when it cannot start. */
static int start_capture(struct api_ctx *ctx, struct evhttp_request *req, const char *id, struct pending *p,
	const char *origin, snapshots_captured done)
{
	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb) {
		free(p);
		return reply_not_found(req, id);
	}
	p->ctx = ctx;
	strcpy(p->sandbox_id, sb->id);
	struct err why;
	/* A sandbox of a built-in template stands on its root filesystem alone:
	 * the one layer templates/ imports it as, for builds and snapshots alike. */
	char template_layer[STORE_NAME_MAX + 1] = "";
	if (sb->layer_count == 0 && runtime_full() &&
		templates_stack_builtin(sb->template_id, template_layer, &why) != 0) {
		free(p);
		return reply_errorf(req, 500, "cannot capture the sandbox: %.255s", why.msg);
	}
	http_parked_hold(&p->parked, req);
	if (snapshots_capture(ctx->reg, sb, template_layer[0] ? template_layer : NULL, origin, done, p,
		    &why) != 0) {
		http_parked_take(&p->parked);
		free(p);
		return reply_errorf(req, why.status, "%.255s", why.msg);
	}
	return API_STATUS_PENDING;
}

/* Its processes and memory first, into p->image, while they run on (the
 * capture's freeze would stop CRIU's); its files are sealed right after.
 * Where they cannot be, p->image is "" and p->why says why. */
static void dump_processes(struct api_ctx *ctx, const char *id, struct pending *p)
{
	static unsigned images;
	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb || sb->state != SANDBOX_RUNNING || !runtime_full())
		return;
	snprintf(p->image, sizeof p->image, "%s/fork-image-%u", sb->dir, images++);
	if (registry_fork_image(ctx->reg, sb, p->image, &p->why) != 0)
		p->image[0] = 0;
}

/* start_capture after dump_processes; the image removed when it cannot start. */
static int dump_and_capture(struct api_ctx *ctx, struct evhttp_request *req, const char *id,
	struct pending *p, const char *origin, snapshots_captured done)
{
	dump_processes(ctx, id, p);
	char image[sizeof p->image];
	strcpy(image, p->image);
	int st = start_capture(ctx, req, id, p, origin, done);
	if (st != API_STATUS_PENDING && image[0])
		tree_remove(image); /* p is gone */
	return st;
}

/* --- createSnapshot --------------------------------------------------------------- */

static void on_snapshot_captured(void *arg, char *const *ids, size_t count, const struct err *err)
{
	struct pending *p = arg;
	struct evhttp_request *req = http_parked_take(&p->parked);
	const struct sandbox *sb = registry_find(p->ctx->reg, p->sandbox_id);
	const struct snapshot *s = NULL;
	if (!err)
		crashpoint("snapshot-sealed");
	if (!err && sb)
		s = snapshots_add(p->ctx->snapshots, sb, p->name.name[0] ? p->name.name : NULL, p->name.tag,
			(const char *const *)ids, count, p->image[0] ? p->image : NULL);
	int status = 201;
	if (!s)
		snapshots_collect(p->ctx->snapshots); /* the sealed layer, now unused */
	if (req && s) {
		/* Which it holds (ours): its processes, or its files only and why. */
		char image[4200];
		snapshots_image_of(p->ctx->snapshots, s, image, sizeof image);
		cJSON *info = snapshot_info(s);
		cJSON_AddStringToObject(info, "kind", image[0] ? "checkpoint" : "files");
		if (!image[0])
			cJSON_AddStringToObject(info, "reason",
				p->why.msg[0] ? p->why.msg : "its processes could not be kept");
		reply_json(req, 201, info);
	} else if (req && !sb)
		status = reply_not_found(req, p->sandbox_id);
	else if (req)
		status = reply_errorf(req, 500, "Failed to create the snapshot: %s",
			err ? err->msg : "cannot record it");
	finish(p, req, status);
}

int api_snapshot_create(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	const char *name = NULL;
	struct pending *p = calloc(1, sizeof *p);
	int st = 0;
	if (!p)
		st = reply_error(req, 500, "out of memory");
	else if (field_string(body, "name", &name, &err) == FIELD_BAD)
		st = reply_error(req, err.status, err.msg);
	else if (name && name[0] && snapshots_ref_parse(name, &p->name, &err) != 0)
		st = reply_errorf(req, err.status, "invalid snapshot name: %s", err.msg);
	else if (!name || !name[0])
		strcpy(p->name.tag, SNAPSHOTS_DEFAULT_TAG);
	cJSON_Delete(body);
	if (st) {
		free(p);
		return st;
	}
	return dump_and_capture(ctx, req, id, p, "snapshot", on_snapshot_captured);
}

/* --- listSnapshots ---------------------------------------------------------------- */

int api_snapshot_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	struct query q;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	if (query_parse(uri ? evhttp_uri_get_query(uri) : NULL, &q) != 0)
		return reply_error(req, 400, "malformed query string");
	const char *name = query_get(&q, "name"), *sandbox = query_get(&q, "sandboxID");
	struct snapshot_ref ref;
	struct err err;
	long long limit = LIST_LIMIT_DEFAULT, from = 0;
	bool bad_limit = query_number(&q, "limit", 1, 100, &limit) < 0;
	bool bad_token = query_number(&q, "nextToken", 0, LLONG_MAX, &from) < 0;
	int st = 0;
	if (name && snapshots_ref_parse(name, &ref, &err) != 0)
		st = reply_errorf(req, err.status, "invalid name filter: %s", err.msg);
	else if (bad_limit)
		st = reply_error(req, 400, "limit must be between 1 and 100");
	else if (bad_token)
		st = reply_error(req, 400, "invalid nextToken");
	if (st) {
		query_free(&q);
		return st;
	}
	/* Newest first; the token is the position of the next one. */
	cJSON *list = cJSON_CreateArray();
	long seen = 0, added = 0;
	bool more = false;
	for (size_t i = snapshots_count(ctx->snapshots); list && i-- > 0;) {
		const struct snapshot *s = snapshots_at(ctx->snapshots, i);
		if ((name && !snapshots_matches(s, &ref, true)) ||
			(sandbox && strcmp(s->sandbox_id, sandbox) != 0))
			continue;
		if (seen++ < from)
			continue;
		if (added == limit) {
			more = true;
			break;
		}
		cJSON_AddItemToArray(list, snapshot_info(s));
		added++;
	}
	query_free(&q);
	if (more) {
		char next[24];
		snprintf(next, sizeof next, "%lld", from + added);
		evhttp_add_header(evhttp_request_get_output_headers(req), "X-Next-Token", next);
	}
	return reply_json(req, 200, list);
}

/* --- deleteSnapshot --------------------------------------------------------------- */

int api_snapshot_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	/* The SDK sends the snapshotID percent-encoded ("local%2Fname%3Atag"). */
	char *text = query_percent_decode(id, strlen(id), false);
	struct snapshot_ref ref;
	int st;
	if (!text || snapshots_ref_parse(text, &ref, NULL) != 0 ||
		snapshots_delete(ctx->snapshots, &ref) == 0)
		st = reply_errorf(req, 404, "Template '%.140s' not found", text ? text : id);
	else
		st = reply_empty(req, 204);
	free(text);
	return st;
}

/* --- fork ------------------------------------------------------------------------- */

static void on_fork_captured(void *arg, char *const *ids, size_t count, const struct err *err)
{
	struct pending *p = arg;
	struct evhttp_request *req = http_parked_take(&p->parked);
	const struct sandbox *orig = registry_find(p->ctx->reg, p->sandbox_id);
	/* A client gone (or the backend stopping) gets no forks: nobody would
	 * know of them. */
	if (err || !orig || !req) {
		int status = !req ? 0
			: !orig   ? reply_not_found(req, p->sandbox_id)
				  : reply_errorf(req, 500, "Failed to fork the sandbox: %s", err->msg);
		snapshots_collect(p->ctx->snapshots);
		finish(p, req, status);
		return;
	}
	crashpoint("fork-sealed");
	cJSON *results = cJSON_CreateArray();
	for (int i = 0; i < p->count; i++) {
		struct err rerr;
		struct sandbox *fork = api_sandboxes_fork(p->ctx, orig, (const char *const *)ids, count,
			p->timeout_s, &rerr);
		struct err why = p->why;
		int restored = !fork  ? -1
			: p->image[0] ? api_sandboxes_fork_restore(p->ctx, fork, p->image, p->timeout_s, &why)
				      : -1;
		if (restored == -2) {
			fork = NULL;
			rerr = why;
		}
		cJSON *r = cJSON_CreateObject();
		if (fork) {
			cJSON *sj = sandbox_json_created(fork, p->ctx->domain);
			cJSON *kind = cJSON_AddObjectToObject(sj, "fork");
			cJSON_AddStringToObject(kind, "kind", restored == 0 ? "checkpoint" : "files");
			if (restored != 0)
				cJSON_AddStringToObject(kind, "reason", why.msg);
			cJSON_AddItemToObject(r, "sandbox", sj);
		} else {
			cJSON *e = cJSON_AddObjectToObject(r, "error");
			cJSON_AddNumberToObject(e, "code", rerr.status);
			cJSON_AddStringToObject(e, "message", rerr.msg);
		}
		cJSON_AddItemToArray(results, r);
	}
	snapshots_collect(p->ctx->snapshots); /* when every fork failed, the layer is unused */
	int status = req ? reply_json(req, 201, results) : (cJSON_Delete(results), 0);
	finish(p, req, status);
}

int api_fork(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	int64_t count = 1, timeout = FORK_TIMEOUT_DEFAULT;
	enum field_result rc = field_int(body, "count", INT32_MIN, INT32_MAX, &count, &err);
	enum field_result rt = rc == FIELD_BAD
		? FIELD_BAD
		: field_int(body, "timeout", 0, SANDBOX_MAX_TIMEOUT_S, &timeout, &err);
	cJSON_Delete(body);
	if (rc == FIELD_BAD || rt == FIELD_BAD)
		return reply_error(req, err.status, err.msg);
	if (count < 1 || count > API_FORK_MAX)
		return reply_errorf(req, 400, "count must be between 1 and %d", API_FORK_MAX);
	struct pending *p = calloc(1, sizeof *p);
	if (!p)
		return reply_error(req, 500, "out of memory");
	p->count = (int)count;
	p->timeout_s = timeout;
	return dump_and_capture(ctx, req, id, p, "fork", on_fork_captured);
}
