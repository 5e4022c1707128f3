/* GET /v2/sandboxes (filtered, paged) and GET /sandboxes (v1, running only). */
#include "api/api_list.h"

#include "api/api_list_cursor.h"
#include "api/api_sandbox_json.h"
#include "http/http_reply.h"
#include "lib/clock.h"
#include "lib/query.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct list_request {
	bool want_running, want_paused;
	struct query metadata; /* every pair must match */
	const char *template_id;
	bool has_started_after;
	int64_t started_after_ms;
	bool ascending;
	long limit;
	bool has_cursor;
	struct list_cursor cursor;
};

/* The metadata parameter is itself an encoded "k=v&k2=v2": like E2B
 * (url.QueryUnescape, split, unescape each side) we decode it once more,
 * then split it into pairs that must each have exactly one '='. */
static int parse_metadata_filter(const char *raw, struct query *out)
{
	memset(out, 0, sizeof *out);
	if (!raw || !*raw)
		return 0;
	char *text = query_percent_decode(raw, strlen(raw), true);
	if (!text)
		return -1;
	size_t cap = 1;
	for (const char *p = text; *p; p++)
		cap += *p == '&';
	out->pairs = calloc(cap, sizeof *out->pairs);
	int rc = out->pairs ? 0 : -1;
	for (const char *p = text; rc == 0;) {
		size_t seg = strcspn(p, "&");
		const char *eq = memchr(p, '=', seg);
		if (!eq || memchr(eq + 1, '=', seg - (size_t)(eq - p) - 1)) {
			rc = -1;
			break;
		}
		struct query_pair *pair = &out->pairs[out->count++];
		pair->key = query_percent_decode(p, (size_t)(eq - p), true);
		pair->value = query_percent_decode(eq + 1, seg - (size_t)(eq - p) - 1, true);
		if (!pair->key || !pair->value)
			rc = -1;
		if (p[seg] == '\0')
			break;
		p += seg + 1;
	}
	free(text);
	if (rc != 0)
		query_free(out);
	return rc;
}

static bool metadata_matches(const struct sandbox *sb, const struct query *filter)
{
	for (size_t i = 0; i < filter->count; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(sb->metadata, filter->pairs[i].key);
		if (!cJSON_IsString(v) || strcmp(v->valuestring, filter->pairs[i].value) != 0)
			return false;
	}
	return true;
}

/* "running,paused"; every occurrence of the parameter counts. */
static int parse_states(const struct query *q, struct list_request *lr)
{
	bool any = false;
	for (size_t i = 0; i < q->count; i++) {
		if (strcmp(q->pairs[i].key, "state") != 0)
			continue;
		if (!any)
			lr->want_running = lr->want_paused = false;
		any = true;
		const char *p = q->pairs[i].value;
		for (;;) {
			size_t n = strcspn(p, ",");
			if (n == 7 && strncmp(p, "running", 7) == 0)
				lr->want_running = true;
			else if (n == 6 && strncmp(p, "paused", 6) == 0)
				lr->want_paused = true;
			else
				return -1;
			if (p[n] == '\0')
				break;
			p += n + 1;
		}
	}
	return 0;
}

/* Reads every v2 query parameter; on error answers 400 and returns its status. */
static int parse_list_request(struct evhttp_request *req, struct query *q, struct list_request *lr)
{
	memset(lr, 0, sizeof *lr);
	lr->want_running = lr->want_paused = true;
	lr->limit = LIST_LIMIT_DEFAULT;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	if (query_parse(uri ? evhttp_uri_get_query(uri) : NULL, q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	if (parse_states(q, lr) != 0)
		return reply_error(req, 400, "Invalid state: use running and/or paused");
	if (list_cursor_limit(query_get(q, "limit"), &lr->limit) != 0)
		return reply_error(req, 400, "limit must be an integer between 1 and 100");

	const char *order = query_get(q, "order");
	if (order && strcmp(order, "asc") != 0 && strcmp(order, "desc") != 0)
		return reply_error(req, 400, "order must be asc or desc");
	lr->ascending = order && strcmp(order, "asc") == 0;

	const char *token = query_get(q, "nextToken");
	if (token && *token) {
		if (list_cursor_decode(token, &lr->cursor) != 0 || lr->cursor.ascending != lr->ascending)
			return reply_error(req, 400, "Invalid next token");
		lr->has_cursor = true;
	}
	if (parse_metadata_filter(query_get(q, "metadata"), &lr->metadata) != 0)
		return reply_error(req, 400, "Error parsing metadata");

	const char *after = query_get(q, "startedAfter");
	if (after && *after) {
		if (clock_parse_rfc3339(after, &lr->started_after_ms) != 0)
			return reply_error(req, 400, "startedAfter must be an RFC 3339 date-time");
		lr->has_started_after = true;
	}
	const char *template_id = query_get(q, "template");
	lr->template_id = template_id && *template_id ? template_id : NULL;
	return 0;
}

/* Newest first, ties by ID ascending (E2B's SortPaginatedSandboxesDesc). */
static int newest_first(const void *a, const void *b)
{
	const struct sandbox *x = *(struct sandbox *const *)a, *y = *(struct sandbox *const *)b;
	if (x->started_at_ms != y->started_at_ms)
		return x->started_at_ms > y->started_at_ms ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int oldest_first(const void *a, const void *b)
{
	const struct sandbox *x = *(struct sandbox *const *)a, *y = *(struct sandbox *const *)b;
	if (x->started_at_ms != y->started_at_ms)
		return x->started_at_ms < y->started_at_ms ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* True when sb sorts strictly after the cursor position. */
static bool after_cursor(const struct sandbox *sb, const struct list_cursor *c)
{
	if (sb->started_at_ms == c->started_at_ms)
		return strcmp(sb->id, c->id) > 0;
	return c->ascending ? sb->started_at_ms > c->started_at_ms : sb->started_at_ms < c->started_at_ms;
}

static bool passes_filters(const struct sandbox *sb, const struct list_request *lr)
{
	if (sb->internal) /* a template build's sandbox */
		return false;
	if (!metadata_matches(sb, &lr->metadata))
		return false;
	if (lr->template_id &&
		strcmp(sb->template_ref ? sb->template_ref : sb->template_id, lr->template_id) != 0 &&
		!(sb->template_alias && strcmp(sb->template_alias, lr->template_id) == 0))
		return false;
	return !lr->has_started_after || sb->started_at_ms >= lr->started_after_ms;
}

/* Answers the page; sets X-Total-Running and, when more remain, X-Next-Token. */
static int reply_page(struct evhttp_request *req, struct registry *reg, const struct list_request *lr)
{
	size_t total = registry_count(reg), n = 0, running = 0;
	struct sandbox **picked = calloc(total ? total : 1, sizeof *picked);
	cJSON *array = cJSON_CreateArray();
	if (!picked || !array) {
		free(picked);
		cJSON_Delete(array);
		return reply_error(req, 500, "out of memory");
	}
	for (size_t i = 0; i < total; i++) {
		struct sandbox *sb = registry_at(reg, i);
		if (!passes_filters(sb, lr))
			continue;
		bool is_running = sb->state == SANDBOX_RUNNING;
		running += is_running;
		if (is_running ? lr->want_running : lr->want_paused)
			picked[n++] = sb;
	}
	qsort(picked, n, sizeof *picked, lr->ascending ? oldest_first : newest_first);

	size_t start = 0;
	while (lr->has_cursor && start < n && !after_cursor(picked[start], &lr->cursor))
		start++;
	size_t end = start + (size_t)lr->limit < n ? start + (size_t)lr->limit : n;
	for (size_t i = start; i < end; i++)
		cJSON_AddItemToArray(array, sandbox_json_listed(picked[i]));

	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	if (end < n) {
		struct list_cursor c = {.started_at_ms = picked[end - 1]->started_at_ms,
			.ascending = lr->ascending};
		memcpy(c.id, picked[end - 1]->id, sizeof picked[end - 1]->id);
		char *token = list_cursor_encode(&c);
		if (token)
			evhttp_add_header(out, "X-Next-Token", token);
		free(token);
	}
	/* Like E2B: the running count after filters, only when running ones were asked for. */
	if (lr->want_running) {
		char count[24];
		snprintf(count, sizeof count, "%zu", running);
		evhttp_add_header(out, "X-Total-Running", count);
	}
	free(picked);
	return reply_json(req, 200, array);
}

int api_list_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	struct query q;
	struct list_request lr;
	int status = parse_list_request(req, &q, &lr);
	if (status == 0)
		status = reply_page(req, ctx->reg, &lr);
	query_free(&lr.metadata);
	query_free(&q);
	return status;
}

int api_list_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	struct query q;
	struct list_request lr = {.want_running = true, .limit = LIST_LIMIT_MAX};
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	int status = 0;
	if (query_parse(uri ? evhttp_uri_get_query(uri) : NULL, &q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	if (parse_metadata_filter(query_get(&q, "metadata"), &lr.metadata) != 0)
		status = reply_error(req, 400, "Error parsing metadata");
	if (status == 0) {
		/* v1 has no paging: every running sandbox in one answer. */
		lr.limit = (long)registry_count(ctx->reg) + 1;
		status = reply_page(req, ctx->reg, &lr);
	}
	query_free(&lr.metadata);
	query_free(&q);
	return status;
}
