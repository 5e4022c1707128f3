/* A sandbox's logs (api_logs.h). */
#include "api/api_logs.h"

#include "http/http_reply.h"
#include "lib/clock.h"
#include "lib/query.h"
#include "registry/registry.h"
#include "registry/registry_log.h"

#include <cJSON.h>
#include <event2/http.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#define LOGS_LIMIT_DEFAULT 1000 /* E2B's, on both routes */
#define LOGS_LIMIT_MAX_V2 1000
#define LOGS_SEARCH_MAX 256

struct logs_query {
	long long from_ms, to_ms; /* inclusive */
	long long limit;
	bool newest_first;
	int min_level;
	const char *search; /* NULL: any message */
};

static bool wanted(const struct registry_log_entry *e, const struct logs_query *lq)
{
	return e->ms >= lq->from_ms && e->ms <= lq->to_ms && (int)e->level >= lq->min_level &&
		(!lq->search || strstr(e->message, lq->search));
}

/* SandboxLogEntry: {timestamp, level, message, fields}. */
static cJSON *entry_json(const struct registry_log_entry *e)
{
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(e->ms, when);
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "timestamp", when);
		cJSON_AddStringToObject(o, "level", registry_log_level_name(e->level));
		cJSON_AddStringToObject(o, "message", e->message);
		cJSON_AddItemToObject(o, "fields", cJSON_Duplicate(e->fields, true));
	}
	return o;
}

/* SandboxLog: {timestamp, line}, the line as the logger wrote it (JSON). */
static cJSON *line_json(const struct registry_log_entry *e)
{
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(e->ms, when);
	cJSON *raw = cJSON_Duplicate(e->fields, true), *o = cJSON_CreateObject();
	char *text = NULL;
	if (raw) {
		cJSON_AddStringToObject(raw, "timestamp", when);
		cJSON_AddStringToObject(raw, "level", registry_log_level_name(e->level));
		cJSON_AddStringToObject(raw, "message", e->message);
		text = cJSON_PrintUnformatted(raw);
	}
	if (o) {
		cJSON_AddStringToObject(o, "timestamp", when);
		cJSON_AddStringToObject(o, "line", text ? text : e->message);
	}
	cJSON_free(text);
	cJSON_Delete(raw);
	return o;
}

/* The entries the query asks for, in its order, into each array given:
 * the oldest `limit` of them, or the newest ones newest first. */
static int collect(const struct sandbox *sb, const struct logs_query *lq, cJSON *entries, cJSON *lines)
{
	long long skip = 0, n = 0;
	if (lq->newest_first) {
		for (const struct registry_log_entry *e = registry_log_first(sb); e; e = e->next)
			skip += wanted(e, lq);
		skip = skip > lq->limit ? skip - lq->limit : 0;
	}
	for (const struct registry_log_entry *e = registry_log_first(sb); e && n < lq->limit; e = e->next) {
		if (!wanted(e, lq) || (skip > 0 && skip--))
			continue;
		cJSON *item = entry_json(e), *line = lines ? line_json(e) : NULL;
		if (!item || (lines && !line)) {
			cJSON_Delete(item);
			cJSON_Delete(line);
			return -1;
		}
		if (lq->newest_first)
			cJSON_InsertItemInArray(entries, 0, item);
		else
			cJSON_AddItemToArray(entries, item);
		if (line)
			cJSON_AddItemToArray(lines, line);
		n++;
	}
	return 0;
}

static int parse_query(struct evhttp_request *req, struct query *q)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	return query_parse(uri ? evhttp_uri_get_query(uri) : NULL, q);
}

static int reply_not_found(struct evhttp_request *req, const char *id)
{
	return reply_errorf(req, 404, "Sandbox \"%s\" doesn't exist or you don't have access to it", id);
}

int api_logs_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct query q;
	if (parse_query(req, &q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	struct logs_query lq = {.from_ms = 0, .to_ms = LLONG_MAX, .limit = LOGS_LIMIT_DEFAULT};
	bool bad = query_number(&q, "start", 0, LLONG_MAX, &lq.from_ms) < 0 ||
		query_number(&q, "limit", 0, INT32_MAX, &lq.limit) < 0;
	query_free(&q);
	if (bad)
		return reply_error(req, 400,
			"Invalid start or limit: start is Unix milliseconds, limit a count");
	const struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	cJSON *o = cJSON_CreateObject();
	cJSON *lines = cJSON_AddArrayToObject(o, "logs"), *entries = cJSON_AddArrayToObject(o, "logEntries");
	if (!lines || !entries || collect(sb, &lq, entries, lines) != 0) {
		cJSON_Delete(o);
		return reply_error(req, 500, "Out of memory");
	}
	return reply_json(req, 200, o);
}

int api_logs_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct query q;
	if (parse_query(req, &q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	struct logs_query lq = {.from_ms = 0,
		.to_ms = LLONG_MAX,
		.limit = LOGS_LIMIT_DEFAULT,
		.newest_first = true};
	long long cursor = -1;
	const char *direction = query_get(&q, "direction"), *level = query_get(&q, "level");
	const char *search = query_get(&q, "search");
	const char *why = NULL;
	if (query_number(&q, "cursor", 0, LLONG_MAX, &cursor) < 0)
		why = "cursor must be Unix milliseconds";
	else if (query_number(&q, "limit", 0, LOGS_LIMIT_MAX_V2, &lq.limit) < 0)
		why = "limit must be a number from 0 to 1000";
	else if (direction && strcmp(direction, "forward") != 0 && strcmp(direction, "backward") != 0)
		why = "direction must be forward or backward";
	else if (level && registry_log_level_parse(level) < 0)
		why = "level must be debug, info, warn or error";
	else if (search && strlen(search) > LOGS_SEARCH_MAX)
		why = "search may be at most 256 bytes";
	if (!why) {
		lq.newest_first = !direction || strcmp(direction, "backward") == 0;
		lq.min_level = level ? registry_log_level_parse(level) : REGISTRY_LOG_DEBUG;
		if (cursor >= 0 && lq.newest_first)
			lq.to_ms = cursor;
		else if (cursor >= 0)
			lq.from_ms = cursor;
	}
	const struct sandbox *sb = why ? NULL : registry_find(ctx->reg, id);
	cJSON *o = sb ? cJSON_CreateObject() : NULL;
	cJSON *entries = o ? cJSON_AddArrayToObject(o, "logs") : NULL;
	lq.search = search && search[0] ? search : NULL;
	int rc = entries ? collect(sb, &lq, entries, NULL) : -1;
	query_free(&q); /* search pointed into it */
	if (why)
		return reply_errorf(req, 400, "Invalid query: %s", why);
	if (!sb)
		return reply_not_found(req, id);
	if (rc != 0) {
		cJSON_Delete(o);
		return reply_error(req, 500, "Out of memory");
	}
	return reply_json(req, 200, o);
}
