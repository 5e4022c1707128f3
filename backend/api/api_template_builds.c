/* E2B's template API, second half: starting a build, its
 * status, aliases, one template, deleting, listing and tags
 * (api_template_builds.h). */
#include "api/api_template_builds.h"

#include "http/http_field.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/err.h"
#include "lib/query.h"
#include "templates/templates.h"
#include "templates/templates_builtin.h"
#include "templates/templates_exec.h"
#include "templates/templates_records.h"
#include "templates/templates_stack.h"
#include "warm/warm.h"

#include <limits.h>
#include <cJSON.h>
#include <errno.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATUS_LIMIT_DEFAULT 100
#define STATUS_LIMIT_MAX 1000

static int reply_template_not_found(struct evhttp_request *req, const char *id)
{
	return reply_errorf(req, 404, "template '%.128s' not found", id);
}

static struct template *find(struct api_ctx *ctx, const char *id)
{
	return id[0] ? templates_find(ctx->templates->catalog, id) : NULL;
}

/* The template named by path segment k (its text in id). */
static struct template *find_at(struct api_ctx *ctx, struct evhttp_request *req, int k, char *id, size_t cap)
{
	request_path_segment(req, k, id, cap);
	return find(ctx, id);
}

/* Tags live in the template's record: written again after a change. */
static void save(struct api_ctx *ctx, const struct template *tpl)
{
	if (templates_records_save(ctx->templates->state_root, tpl) != 0)
		fprintf(stderr, "e2b-local-backend: cannot write the record of template %s: %s\n", tpl->id,
			strerror(errno));
}

/* POST /v2/templates/{templateID}/builds/{buildID} */
int api_templates_build_start(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256], build_id[64];
	request_path_segment(req, 2, id, sizeof id);
	request_path_segment(req, 4, build_id, sizeof build_id);
	struct template *tpl = find(ctx, id);
	if (!tpl)
		return reply_template_not_found(req, id);
	struct template_build *b = templates_find_build(tpl, build_id);
	if (!b)
		return reply_errorf(req, 404, "build '%.64s' of template '%.128s' not found", build_id, id);
	if (b->status != BUILD_WAITING)
		return reply_errorf(req, 409, "build '%s' was already started", b->id);
	struct err err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	int rc = templates_exec_start(ctx->templates, tpl, b, body, &err);
	cJSON_Delete(body);
	if (rc != 0)
		return reply_errorf(req, 400, "Error when parsing request: %.299s", err.msg);
	return reply_empty(req, 202);
}

/* GET /templates/{templateID}/builds/{buildID}/status?logsOffset&limit */
int api_templates_build_status(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256], build_id[64];
	request_path_segment(req, 1, id, sizeof id);
	request_path_segment(req, 3, build_id, sizeof build_id);
	struct template *tpl = find(ctx, id);
	struct template_build *b = tpl ? templates_find_build(tpl, build_id) : NULL;
	if (!b)
		return reply_errorf(req, 404, "build '%.64s' of template '%.128s' not found", build_id, id);
	struct query q;
	const char *uri = evhttp_request_get_uri(req);
	const char *qs = strchr(uri, '?');
	if (query_parse(qs ? qs + 1 : "", &q) != 0)
		return reply_error(req, 400, "malformed query");
	long long offset = 0, limit = STATUS_LIMIT_DEFAULT;
	bool bad = query_number(&q, "logsOffset", 0, LLONG_MAX, &offset) < 0 ||
		query_number(&q, "limit", 0, STATUS_LIMIT_MAX, &limit) < 0;
	query_free(&q);
	if (bad)
		return reply_errorf(req, 400, "logsOffset must be a number from 0, limit from 0 to %d",
			STATUS_LIMIT_MAX);
	return reply_json(req, 200, build_info_json(b, (size_t)offset, (size_t)limit));
}

/* GET /templates/aliases/{alias}: a built template's name, or a built-in's */
int api_templates_alias(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char alias[256];
	request_path_segment(req, 2, alias, sizeof alias);
	struct template *tpl = find(ctx, alias);
	struct templates_builtin builtin;
	if ((!tpl || strcmp(tpl->name, alias) != 0) && templates_builtin_find(alias, &builtin))
		tpl = &builtin.tpl;
	if (!tpl || strcmp(tpl->name, alias) != 0)
		return reply_errorf(req, 404, "template with alias '%.128s' not found", alias);
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "templateID", tpl->id);
		cJSON_AddBoolToObject(o, "public", tpl->builtin);
	}
	return reply_json(req, 200, o);
}

/* GET /templates/{templateID}: a built template, or a built-in one */
int api_templates_get(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256];
	struct template *tpl = find_at(ctx, req, 1, id, sizeof id);
	struct templates_builtin builtin;
	if (!tpl && templates_builtin_find(id, &builtin))
		tpl = &builtin.tpl;
	if (!tpl)
		return reply_template_not_found(req, id);
	return reply_json(req, 200, templates_with_builds_json(tpl));
}

/* DELETE /templates/{templateID}: running builds stop first. */
int api_templates_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256];
	struct template *tpl = find_at(ctx, req, 1, id, sizeof id);
	if (!tpl)
		return reply_template_not_found(req, id);
	for (struct template_build *b = tpl->builds; b; b = b->next)
		if (b->exec)
			templates_exec_cancel(ctx->templates, b);
	if (templates_records_delete(ctx->templates->state_root, tpl->id) != 0)
		return reply_errorf(req, 500, "cannot delete the template's record: %s", strerror(errno));
	templates_remove(ctx->templates->catalog, tpl);
	warm_forget_templates(ctx->warm); /* pooled sandboxes would keep its layers */
	templates_stack_collect_soon();   /* its layers, unless others use them */
	return reply_empty(req, 204);
}

/* GET /templates and /v2/templates: every template (the local backend
 * has one team; no paging is needed at its sizes). */
int api_templates_list(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	cJSON *list = cJSON_CreateArray();
	for (struct template *t = ctx->templates->catalog->head; list && t; t = t->next)
		cJSON_AddItemToArray(list, templates_json(t));
	return reply_json(req, 200, list);
}

/* GET /templates/{templateID}/tags */
int api_templates_tags_list(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256];
	struct template *tpl = find_at(ctx, req, 1, id, sizeof id);
	if (!tpl)
		return reply_template_not_found(req, id);
	return reply_json(req, 200, templates_tags_json(tpl));
}

/* The tags array of a tags request: valid names, at least one. */
static const cJSON *tags_field(const cJSON *body, struct err *err)
{
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(body, "tags");
	const cJSON *t;
	bool ok = cJSON_IsArray(tags) && cJSON_GetArraySize(tags) > 0;
	const cJSON *each = ok ? tags : NULL;
	cJSON_ArrayForEach(t, each) {
		ok = ok && cJSON_IsString(t) && templates_valid_name(t->valuestring, TEMPLATES_TAG_MAX);
	}
	if (!ok)
		body_error_set(err,
			"field \"tags\" must be a non-empty array of tags (lowercase letters, "
			"digits, '.', '_', '-')");
	return ok ? tags : NULL;
}

/* POST /templates/tags {target: "name:tag", tags} */
int api_templates_tags_assign(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	struct err err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	const char *target = NULL;
	char name[TEMPLATES_NAME_MAX + 1], tag[TEMPLATES_TAG_MAX + 1];
	const cJSON *tags = NULL;
	if (field_string(body, "target", &target, &err) == FIELD_BAD || !(tags = tags_field(body, &err)) ||
		!target || templates_split_ref(target, name, tag) != 0) {
		if (tags && (!target || templates_split_ref(target, name, tag) != 0))
			body_error_set(&err, "field \"target\" must be \"name:tag\"");
		cJSON_Delete(body);
		return reply_error(req, err.status, err.msg);
	}
	struct template *tpl = find(ctx, name);
	struct template_build *b = tpl ? templates_ready_build(tpl, tag) : NULL;
	if (!b) {
		cJSON_Delete(body);
		return reply_errorf(req, 404, "template '%.200s' not found", target);
	}
	const cJSON *t;
	cJSON_ArrayForEach(t, tags)
		templates_tag(tpl, t->valuestring, b->id);
	save(ctx, tpl);
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "buildID", b->id);
		cJSON_AddItemToObject(o, "tags", cJSON_Duplicate(tags, true));
	}
	cJSON_Delete(body);
	return reply_json(req, 201, o);
}

/* DELETE /templates/tags {name, tags} */
int api_templates_tags_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	struct err err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	const char *name = NULL;
	const cJSON *tags = NULL;
	if (field_string(body, "name", &name, &err) == FIELD_BAD || !(tags = tags_field(body, &err)) ||
		!name) {
		if (tags && !name)
			body_error_set(&err, "field \"name\" is required");
		cJSON_Delete(body);
		return reply_error(req, err.status, err.msg);
	}
	struct template *tpl = find(ctx, name);
	if (!tpl) {
		int rc = reply_template_not_found(req, name);
		cJSON_Delete(body);
		return rc;
	}
	const cJSON *t;
	cJSON_ArrayForEach(t, tags)
		cJSON_DeleteItemFromObjectCaseSensitive(tpl->tags, t->valuestring);
	save(ctx, tpl);
	cJSON_Delete(body);
	return reply_empty(req, 204);
}
