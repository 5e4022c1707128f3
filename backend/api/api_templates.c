/* E2B's template API (api_templates.h). */
#include "api/api_templates.h"

#include "http/http_field.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/query.h"
#include "runtime/runtime.h"
#include "templates/templates.h"
#include "templates/templates_exec.h"
#include "templates/templates_files.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_FREE_DISK_HEADROOM_MB 512

static int reply_template_not_found(struct evhttp_request *req, const char *id)
{
	/* E2B's wording for a template the team cannot see. */
	return reply_errorf(req, 404, "template '%.128s' not found", id);
}

static struct template *find_template(struct api_ctx *ctx, struct evhttp_request *req, int k, char *id,
	size_t cap)
{
	request_path_segment(req, k, id, cap);
	return id[0] ? templates_find(ctx->templates->catalog, id) : NULL;
}

static int add_tags(cJSON *tags, const char *tag)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, tags) {
		if (strcmp(t->valuestring, tag) == 0)
			return 0;
	}
	return cJSON_AddItemToArray(tags, cJSON_CreateString(tag)) ? 0 : -1;
}

/* The tags of a request: an array of valid tag names. */
static int read_tags(const cJSON *body, const char *field, cJSON *tags, struct err *err)
{
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(body, field);
	if (!given || cJSON_IsNull(given))
		return 0;
	if (!cJSON_IsArray(given)) {
		body_error_set(err, "field \"%s\" must be an array of strings", field);
		return -1;
	}
	const cJSON *t;
	cJSON_ArrayForEach(t, given) {
		if (!cJSON_IsString(t) || !templates_valid_name(t->valuestring, TEMPLATES_TAG_MAX)) {
			body_error_set(err,
				"field \"%s\": a tag is lowercase letters, digits, '.', '_' "
				"and '-'",
				field);
			return -1;
		}
		add_tags(tags, t->valuestring);
	}
	return 0;
}

static int read_size(const cJSON *body, const char *name, int64_t min, int64_t max, int *out, struct err *err)
{
	int64_t n;
	enum field_result r = field_int(body, name, min, max, &n, err);
	if (r == FIELD_OK)
		*out = (int)n;
	return r == FIELD_BAD ? -1 : 0;
}

int api_templates_request(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	struct err err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	const char *ref = NULL;
	int cpu = SANDBOX_DEFAULT_CPU_COUNT, memory = SANDBOX_DEFAULT_MEMORY_MB, free_disk = 0;
	cJSON *tags = cJSON_CreateArray();
	char name[TEMPLATES_NAME_MAX + 1], tag[TEMPLATES_TAG_MAX + 1];
	int bad = !tags || field_string(body, "name", &ref, &err) == FIELD_BAD ||
		(!ref && field_string(body, "alias", &ref, &err) == FIELD_BAD) ||
		read_tags(body, "tags", tags, &err) != 0 ||
		read_size(body, "cpuCount", 1, SANDBOX_MAX_CPU_COUNT, &cpu, &err) != 0 ||
		read_size(body, "memoryMB", SANDBOX_MIN_MEMORY_MB, SANDBOX_MAX_MEMORY_MB, &memory, &err) !=
			0 ||
		read_size(body, "minFreeDiskMb", 0, SANDBOX_MAX_DISK_SIZE_MB / 2, &free_disk, &err) != 0;
	if (!bad && (!ref || templates_split_ref(ref, name, tag) != 0)) {
		body_error_set(&err,
			"field \"name\" must be a template name, optionally with a tag "
			"(\"my-template\" or \"my-template:v1\"): lowercase letters, digits, '.', '_' and '-'");
		bad = 1;
	}
	cJSON_Delete(body);
	if (bad) {
		cJSON_Delete(tags);
		return reply_error(req, err.status, err.msg);
	}
	if (tag[0])
		add_tags(tags, tag);
	struct templates *cat = ctx->templates->catalog;
	struct template *tpl = templates_find(cat, name);
	if (!tpl)
		tpl = templates_add(cat, name);
	int disk = SANDBOX_DEFAULT_DISK_SIZE_MB;
	if (free_disk + MIN_FREE_DISK_HEADROOM_MB > disk)
		disk = free_disk + MIN_FREE_DISK_HEADROOM_MB;
	struct template_build *b = tpl ? build_new(tpl->id, cpu, memory, disk) : NULL;
	if (!b) {
		cJSON_Delete(tags);
		return reply_error(req, 500, "out of memory");
	}
	b->tags = tags;
	b->next = tpl->builds;
	tpl->builds = b;
	cJSON *o = cJSON_CreateObject();
	const char *names[] = {tpl->name};
	if (o) {
		cJSON_AddStringToObject(o, "templateID", tpl->id);
		cJSON_AddStringToObject(o, "buildID", b->id);
		cJSON_AddItemToObject(o, "names", cJSON_CreateStringArray(names, 1));
		cJSON_AddItemToObject(o, "aliases", cJSON_CreateStringArray(names, 1));
		cJSON_AddItemToObject(o, "tags", cJSON_Duplicate(tags, true));
		cJSON_AddBoolToObject(o, "public", false);
	}
	return reply_json(req, 202, o);
}

/* {templateID} and {hash} of /templates/{templateID}/files/{hash}. */
static struct template *file_route(struct api_ctx *ctx, struct evhttp_request *req, char *id, size_t cap,
	char *hash, size_t hash_cap)
{
	struct template *tpl = find_template(ctx, req, 1, id, cap);
	request_path_segment(req, 3, hash, hash_cap);
	return tpl;
}

int api_templates_file_link(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256], hash[128];
	if (!file_route(ctx, req, id, sizeof id, hash, sizeof hash))
		return reply_template_not_found(req, id);
	if (!templates_files_valid_hash(hash))
		return reply_error(req, 400, "the files hash must be 64 lowercase hex digits (sha256)");
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return reply_error(req, 500, "out of memory");
	bool present = templates_files_present(hash);
	cJSON_AddBoolToObject(o, "present", present);
	/* The link is on this listener, as the request reached it; its token
	 * is the hash's, so the API key never goes with the upload. */
	const char *host = evhttp_find_header(evhttp_request_get_input_headers(req), "Host");
	char token[TEMPLATES_TOKEN_LEN + 1];
	templates_files_token(hash, token);
	if (host && strlen(host) < 256 && !strpbrk(host, " \t\r\n/?#@")) {
		char url[1024];
		snprintf(url, sizeof url, "http://%s/templates/%s/files/%s?token=%s", host, id, hash, token);
		cJSON_AddStringToObject(o, "url", url);
	}
	return reply_json(req, 201, o);
}

bool api_templates_upload_link_ok(const char *path, const char *query)
{
	/* /templates/<id>/files/<hash>: the hash is the last segment. */
	const char *slash = strrchr(path, '/');
	char hash[128];
	if (!slash || strlen(slash + 1) >= sizeof hash)
		return false;
	snprintf(hash, sizeof hash, "%s", slash + 1);
	struct query q;
	if (query_parse(query ? query : "", &q) != 0)
		return false;
	bool ok = templates_files_token_ok(hash, query_get(&q, "token"));
	query_free(&q);
	return ok;
}

int api_templates_file_upload(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	char id[256], hash[128];
	struct query q;
	const char *uri = evhttp_request_get_uri(req);
	const char *qs = strchr(uri, '?');
	if (query_parse(qs ? qs + 1 : "", &q) != 0)
		return reply_error(req, 400, "malformed query");
	struct template *tpl = file_route(ctx, req, id, sizeof id, hash, sizeof hash);
	bool ok = templates_files_token_ok(hash, query_get(&q, "token"));
	query_free(&q);
	if (!ok)
		return reply_error(req, 403, "this upload link is not valid");
	if (!tpl)
		return reply_template_not_found(req, id);
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	const unsigned char *data = len ? evbuffer_pullup(in, -1) : (const unsigned char *)"";
	if (!data || templates_files_store(hash, data, len) != 0)
		return reply_errorf(req, errno == ENOSPC ? 507 : 500, "cannot store the upload: %s",
			strerror(errno));
	return reply_empty(req, 200);
}
