/* /secrets (api_secrets.h). */
#include "api/api_secrets.h"

#include "api/api_list_cursor.h"
#include "http/http_body.h"
#include "http/http_field.h"
#include "http/http_reply.h"
#include "lib/clock.h"
#include "lib/query.h"
#include "secrets/secrets.h"

#include <cJSON.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct map_limits metadata_limits = {
	.max_keys = SECRETS_METADATA_MAX_KEYS,
	.max_key_bytes = SECRETS_METADATA_MAX_KEY_BYTES,
	.max_value_bytes = SECRETS_METADATA_MAX_VALUE_BYTES,
	.max_total_bytes = SECRETS_METADATA_MAX_TOTAL_BYTES,
};

/* E2B's Secret: metadata only. */
static cJSON *secret_json(const struct secret *s)
{
	char created[CLOCK_RFC3339_LEN], updated[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(s->created_ms, created);
	clock_format_rfc3339(s->updated_ms, updated);
	cJSON *o = cJSON_CreateObject();
	cJSON *meta = cJSON_Duplicate(s->metadata, true);
	if (!o || !meta || !cJSON_AddStringToObject(o, "secretID", s->id) ||
		!cJSON_AddStringToObject(o, "name", s->name) ||
		!cJSON_AddNumberToObject(o, "currentVersion", (double)s->version) ||
		!cJSON_AddItemToObject(o, "metadata", meta)) {
		cJSON_Delete(o);
		cJSON_Delete(meta);
		return NULL;
	}
	cJSON_AddStringToObject(o, "createdAt", created);
	cJSON_AddStringToObject(o, "updatedAt", updated);
	return o;
}

/* The body's value (required) and metadata (optional: NULL when absent);
 * on a bad field, answers 400 and returns its status. */
static int read_value_and_metadata(struct evhttp_request *req, const cJSON *body, const char **value,
	const cJSON **metadata)
{
	struct err berr;
	*metadata = NULL;
	enum field_result r = field_string(body, "value", value, &berr);
	if (r == FIELD_ABSENT)
		body_error_set(&berr, "field \"value\" is required");
	if (r != FIELD_OK ||
		field_string_map(body, "metadata", &metadata_limits, metadata, &berr) == FIELD_BAD)
		return reply_error(req, berr.status, berr.msg);
	return 0;
}

/* Answers s, or the refusal err holds. */
static int reply_secret(struct evhttp_request *req, int status, const struct secret *s, const struct err *err)
{
	if (!s)
		return reply_error(req, err->status, err->msg);
	cJSON *o = secret_json(s);
	return o ? reply_json(req, status, o) : reply_error(req, 500, "out of memory");
}

int api_secret_create(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	struct err berr;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &berr);
	if (!body)
		return reply_error(req, berr.status, berr.msg);
	const char *name = NULL, *value = NULL;
	const cJSON *metadata = NULL;
	enum field_result r = field_string(body, "name", &name, &berr);
	if (r == FIELD_ABSENT)
		body_error_set(&berr, "field \"name\" is required");
	int status = r == FIELD_OK ? read_value_and_metadata(req, body, &value, &metadata)
				   : reply_error(req, berr.status, berr.msg);
	if (status == 0) {
		struct err err;
		const struct secret *s = secrets_create(ctx->secrets, name, value, metadata, &err);
		status = reply_secret(req, 201, s, &err);
	}
	cJSON_Delete(body);
	return status;
}

/* The {secretID} segment as the client meant it (the SDK percent-encodes
 * path parameters); NULL for a malformed escape. */
static char *path_ref(const char *id)
{
	return query_percent_decode(id, strlen(id), false);
}

int api_secret_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	char *ref = path_ref(id);
	const struct secret *s = ref ? secrets_find(ctx->secrets, ref) : NULL;
	free(ref);
	if (!s)
		return reply_errorf(req, 404, "Secret '%.128s' not found", id);
	return reply_secret(req, 200, s, NULL);
}

int api_secret_update(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	char *ref = path_ref(id);
	if (!ref || !secrets_find(ctx->secrets, ref)) {
		free(ref);
		return reply_errorf(req, 404, "Secret '%.128s' not found", id);
	}
	struct err berr;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &berr);
	const char *value = NULL;
	const cJSON *metadata = NULL;
	int status = body ? read_value_and_metadata(req, body, &value, &metadata)
			  : reply_error(req, berr.status, berr.msg);
	if (status == 0) {
		struct err err;
		const struct secret *s = secrets_update(ctx->secrets, ref, value, metadata, &err);
		status = reply_secret(req, 200, s, &err);
	}
	cJSON_Delete(body);
	free(ref);
	return status;
}

int api_secret_delete(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	char *ref = path_ref(id);
	struct err err;
	err_set(&err, 404, "Secret '%.128s' not found", id);
	int rc = ref ? secrets_delete(ctx->secrets, ref, &err) : -1;
	free(ref);
	return rc == 0 ? reply_empty(req, 204) : reply_error(req, err.status, err.msg);
}

/* Oldest first, ties by id: the order secrets_at keeps. The cursor names
 * the last secret served; the next page starts strictly after it, so a
 * secret deleted between pages skips nothing. */
static bool after_cursor(const struct secret *s, const struct list_cursor *c)
{
	if (s->created_ms != c->started_at_ms)
		return s->created_ms > c->started_at_ms;
	return strcmp(s->id, c->id) > 0;
}

int api_secret_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	struct query q;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	if (query_parse(uri ? evhttp_uri_get_query(uri) : NULL, &q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	long limit = LIST_LIMIT_DEFAULT;
	struct list_cursor cursor;
	const char *token = query_get(&q, "nextToken");
	bool has_cursor = token && *token;
	int status = 0;
	if (list_cursor_limit(query_get(&q, "limit"), &limit) != 0)
		status = reply_error(req, 400, "limit must be an integer between 1 and 100");
	else if (has_cursor && (list_cursor_decode(token, &cursor) != 0 || !cursor.ascending))
		status = reply_error(req, 400, "Invalid next token");
	query_free(&q);
	if (status != 0)
		return status;

	size_t n = secrets_count(ctx->secrets), i = 0, served = 0;
	while (has_cursor && i < n && !after_cursor(secrets_at(ctx->secrets, i), &cursor))
		i++;
	cJSON *list = cJSON_CreateArray();
	const struct secret *last = NULL;
	for (; list && i < n && served < (size_t)limit; i++, served++) {
		last = secrets_at(ctx->secrets, i);
		cJSON *o = secret_json(last);
		if (!o || !cJSON_AddItemToArray(list, o)) {
			cJSON_Delete(o);
			cJSON_Delete(list);
			list = NULL;
		}
	}
	if (!list)
		return reply_error(req, 500, "out of memory");
	if (i < n && last) {
		struct list_cursor next = {.started_at_ms = last->created_ms, .ascending = true};
		memcpy(next.id, last->id, sizeof last->id);
		char *text = list_cursor_encode(&next);
		if (text)
			evhttp_add_header(evhttp_request_get_output_headers(req), "X-Next-Token", text);
		free(text);
	}
	return reply_json(req, 200, list);
}
