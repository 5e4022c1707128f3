/* Sandbox metrics routes (api_metrics.h). */
#include "api/api_metrics.h"

#include "http/http_reply.h"
#include "lib/clock.h"
#include "lib/query.h"
#include "metrics/metrics.h"
#include "registry/registry.h"

#include <limits.h>
#include <cJSON.h>
#include <errno.h>
#include <event2/http.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* E2B's SandboxMetric. */
static cJSON *sample_json(const struct sandbox *sb, const struct metrics_sample *s)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(s->at_ms, when);
	cJSON_AddStringToObject(o, "timestamp", when);
	cJSON_AddNumberToObject(o, "timestampUnix", (double)(s->at_ms / 1000));
	cJSON_AddNumberToObject(o, "cpuCount", sb->cpu_count);
	cJSON_AddNumberToObject(o, "cpuUsedPct", s->cpu_used_pct);
	cJSON_AddNumberToObject(o, "memUsed", (double)s->mem_used);
	cJSON_AddNumberToObject(o, "memTotal", (double)sb->memory_mb * 1024 * 1024);
	cJSON_AddNumberToObject(o, "memCache", (double)s->mem_cache);
	cJSON_AddNumberToObject(o, "diskUsed", (double)s->disk_used);
	cJSON_AddNumberToObject(o, "diskTotal", (double)s->disk_total);
	return o;
}

static int parse_query(struct evhttp_request *req, struct query *q)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	return query_parse(uri ? evhttp_uri_get_query(uri) : NULL, q);
}

int api_sandbox_metrics(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct query q;
	if (parse_query(req, &q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	/* Unix seconds: absent is fine, else digits only */
	long long start = 0, end = LLONG_MAX;
	int bad = query_number(&q, "start", 0, LLONG_MAX, &start) < 0 ||
		query_number(&q, "end", 0, LLONG_MAX, &end) < 0;
	query_free(&q);
	if (bad)
		return reply_error(req, 400, "Invalid start or end: Unix seconds expected");
	if (start > end)
		return reply_error(req, 400, "start must not be after end");
	const struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_errorf(req, 404, "Sandbox \"%s\" doesn't exist or you don't have access to it",
			id);
	cJSON *list = cJSON_CreateArray();
	for (size_t i = 0; list && i < metrics_count(sb); i++) {
		const struct metrics_sample *s = metrics_at(sb, i);
		int64_t at = s->at_ms / 1000;
		if (at >= start && at <= end && !cJSON_AddItemToArray(list, sample_json(sb, s))) {
			cJSON_Delete(list);
			list = NULL;
		}
	}
	return list ? reply_json(req, 200, list) : reply_error(req, 500, "Out of memory");
}

/* Counts the IDs of every sandbox_ids value: comma-separated as E2B's API
 * and its Python SDK send them, or repeated (sandbox_ids=a&sandbox_ids=b) as
 * a generic OpenAPI client may. With out, also adds the latest sample of
 * each one that is running and has one (unknown IDs are left out, as E2B). */
static size_t each_id(struct api_ctx *ctx, const struct query *q, cJSON *out)
{
	size_t count = 0;
	for (size_t i = 0; i < q->count; i++) {
		if (strcmp(q->pairs[i].key, "sandbox_ids") != 0)
			continue;
		for (const char *p = q->pairs[i].value; *p;) {
			size_t len = strcspn(p, ",");
			count += len > 0;
			char id[SANDBOX_ID_LEN + 1];
			const struct sandbox *sb = NULL;
			if (out && len > 0 && len <= SANDBOX_ID_LEN) {
				memcpy(id, p, len);
				id[len] = '\0';
				sb = registry_find(ctx->reg, id);
			}
			size_t n = sb && sb->state == SANDBOX_RUNNING ? metrics_count(sb) : 0;
			if (n && !cJSON_HasObjectItem(out, id))
				cJSON_AddItemToObject(out, id, sample_json(sb, metrics_at(sb, n - 1)));
			p += len + (p[len] == ',');
		}
	}
	return count;
}

int api_sandboxes_metrics(struct api_ctx *ctx, struct evhttp_request *req, const char *unused)
{
	(void)unused;
	struct query q;
	if (parse_query(req, &q) != 0)
		return reply_error(req, 400, "Invalid query string: malformed percent-encoding");
	size_t count = each_id(ctx, &q, NULL);
	if (count == 0 || count > API_METRICS_MAX_IDS) {
		query_free(&q);
		return reply_errorf(req, 400, "sandbox_ids must list 1 to %d sandbox IDs",
			API_METRICS_MAX_IDS);
	}
	cJSON *o = cJSON_CreateObject();
	cJSON *sandboxes = cJSON_AddObjectToObject(o, "sandboxes");
	if (sandboxes)
		each_id(ctx, &q, sandboxes);
	query_free(&q);
	if (!sandboxes) {
		cJSON_Delete(o);
		return reply_error(req, 500, "Out of memory");
	}
	return reply_json(req, 200, o);
}
