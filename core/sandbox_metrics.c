/* sandbox_metrics.c — E2B's SandboxMetric samples as the seed's snake_case
 * (sandbox_metrics.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "e2b_api.h"
#include "errors.h"
#include "json_add.h"
#include "rfc3339.h"
#include "sandbox_metrics.h"
#include "url.h"

/* How far back sandbox.get looks for the latest sample: a few samples at
 * E2B's interval (5 s), and room for the host's and the backend's clocks to
 * differ a little. */
#define LATEST_WINDOW_S 120

static const char *const sample_fields[][2] = {{"timestampUnix", "timestamp_unix"}, {"cpuCount", "cpu_count"},
	{"cpuUsedPct", "cpu_used_pct"}, {"memUsed", "mem_used"}, {"memTotal", "mem_total"},
	{"memCache", "mem_cache"}, {"diskUsed", "disk_used"}, {"diskTotal", "disk_total"}};

/* A SandboxMetric in the seed's style; fields the backend left out stay out. */
static cJSON *sample_record(const cJSON *m)
{
	cJSON *out = cJSON_CreateObject();
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(m, "timestamp");
	if (out && cJSON_IsString(ts))
		cJSON_AddStringToObject(out, "timestamp", ts->valuestring);
	for (size_t i = 0; out && i < sizeof sample_fields / sizeof sample_fields[0]; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, sample_fields[i][0]);
		if (cJSON_IsNumber(v))
			cJSON_AddNumberToObject(out, sample_fields[i][1], v->valuedouble);
	}
	return out;
}

/* A start or end parameter in Unix seconds: a number, or an RFC 3339 time
 * (the check in methods.c let only Z-times through). Start rounds down, end
 * up, so the range holds every sample the host named. */
static double param_seconds(const cJSON *v, int round_up)
{
	double ms = 0;
	if (cJSON_IsNumber(v))
		ms = v->valuedouble * 1000;
	else if (!cJSON_IsString(v) || e2bw_rfc3339_ms(v->valuestring, &ms))
		return -1;
	return round_up ? ceil(ms / 1000) : floor(ms / 1000);
}

/* "/sandboxes/<id>/metrics[?start=S][&end=E]" (negative: left out). */
static e2bw_http_op *metrics_request(e2bw_core *core, e2bw_call *call, const char *id, double start,
	double end, e2bw_http_done_fn done)
{
	e2bw_buf path = {0};
	char range[64] = "";
	if (start >= 0 && end >= 0)
		snprintf(range, sizeof range, "?start=%.0f&end=%.0f", start, end);
	else if (start >= 0)
		snprintf(range, sizeof range, "?start=%.0f", start);
	else if (end >= 0)
		snprintf(range, sizeof range, "?end=%.0f", end);
	e2bw_http_op *op = NULL;
	if (e2bw_buf_append_str(&path, "/sandboxes/") || e2bw_url_encode_str(&path, id) ||
		e2bw_buf_append_str(&path, "/metrics") || e2bw_buf_append_str(&path, range))
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		op = e2bw_api_request(core, call, "GET", path.data, NULL, done);
	e2bw_buf_free(&path);
	return op;
}

static const char *sandbox_id(const e2bw_call *call)
{
	return cJSON_GetObjectItemCaseSensitive(call->params, "sandbox_id")->valuestring;
}

static void series_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (op->status < 200 || op->status > 299) {
		cJSON *error = e2bw_api_error(op, sandbox_id(call));
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, error);
		return;
	}
	cJSON *list = e2bw_api_json(core, op, 1);
	if (!list)
		return;
	e2bw_http_op_finish(core, op);
	cJSON *result = cJSON_CreateObject();
	cJSON_AddStringToObject(result, "sandbox_id", sandbox_id(call));
	cJSON *samples = cJSON_AddArrayToObject(result, "metrics");
	const cJSON *m;
	cJSON_ArrayForEach(m, list)
		if (cJSON_IsObject(m))
			e2bw_push(samples, sample_record(m));
	cJSON_Delete(list);
	if (!samples || e2bw_alloc_failures() != core->alloc_mark) {
		cJSON_Delete(result);
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	e2bw_call_succeed(core, call, result);
}

void e2bw_sandbox_metrics(e2bw_core *core, e2bw_call *call)
{
	double start = param_seconds(cJSON_GetObjectItemCaseSensitive(call->params, "start"), 0);
	double end = param_seconds(cJSON_GetObjectItemCaseSensitive(call->params, "end"), 1);
	metrics_request(core, call, sandbox_id(call), start, end, series_done);
}

/* --- the latest sample, for sandbox.get ---------------------------------- */

static void latest_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *rec = call->scratch;
	call->scratch = NULL;
	cJSON *list = op->status >= 200 && op->status <= 299
		? cJSON_ParseWithLength(op->body.data, op->body.len)
		: NULL;
	cJSON *last = cJSON_IsArray(list) ? cJSON_GetArrayItem(list, cJSON_GetArraySize(list) - 1) : NULL;
	if (cJSON_IsObject(last))
		e2bw_add(rec, "metrics", sample_record(last));
	cJSON_Delete(list);
	e2bw_http_op_finish(core, op);
	e2bw_call_succeed(core, call, rec);
}

static void latest_failed(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	cJSON_Delete(error); /* the record stands without figures */
	e2bw_call *call = op->call;
	cJSON *rec = call->scratch;
	call->scratch = NULL;
	e2bw_call_succeed(core, call, rec);
}

void e2bw_sandbox_metrics_latest(e2bw_core *core, e2bw_call *call, cJSON *rec)
{
	cJSON_Delete(call->scratch);
	call->scratch = rec;
	double now_s = floor(core->now / 1000);
	e2bw_http_op *op =
		metrics_request(core, call, sandbox_id(call), now_s - LATEST_WINDOW_S, -1, latest_done);
	if (op)
		op->on_fail = latest_failed;
}
