/* sandbox.c — the sandbox.* methods but sandbox.create (sandbox_create.c),
 * mapped onto the E2B control plane. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "e2b_api.h"
#include "envd.h"
#include "errors.h"
#include "json_add.h"
#include "rfc3339.h"
#include "sandbox.h"
#include "sandbox_metrics.h"
#include "url.h"

/* E2B's connect route uses this when told no timeout
 * (docs/e2b-protocol-notes.md, "Control plane"). */
#define E2B_CONNECT_DEFAULT_TIMEOUT_S 300.0
/* sandbox.list follows X-Next-Token at most this many pages. */
#define LIST_MAX_PAGES 1000
/* sandbox.list's page size (E2B's maximum); halved while a page is too big. */
#define LIST_PAGE 100

/* E2B takes whole seconds; never round a requested lifetime down. */
static double whole_seconds(double s)
{
	return ceil(s);
}

/* "/sandboxes/<id><suffix>" with the id percent-encoded (it was validated,
 * but encoding keeps the path safe whatever the table allows). */
int e2bw_sandbox_path(e2bw_buf *out, const char *prefix, const char *id, const char *suffix)
{
	return e2bw_buf_append_str(out, prefix) || e2bw_url_encode_str(out, id) ||
		e2bw_buf_append_str(out, suffix);
}

static e2bw_http_op *sandbox_request(e2bw_core *core, e2bw_call *call, const char *method, const char *prefix,
	const char *suffix, const cJSON *body, e2bw_http_done_fn done)
{
	e2bw_buf path = {0};
	e2bw_http_op *op = NULL;
	if (e2bw_sandbox_path(&path, prefix, e2bw_call_param_str(call, "sandbox_id"), suffix) != 0)
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		op = e2bw_api_request(core, call, method, path.data, body, done);
	e2bw_buf_free(&path);
	return op;
}

/* Ends the call with the typed error for a non-2xx answer. */
void e2bw_sandbox_fail_status(e2bw_core *core, e2bw_http_op *op, const char *sandbox_id)
{
	e2bw_call *call = op->call;
	cJSON *error = e2bw_api_error(op, sandbox_id);
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, error);
}

void e2bw_sandbox_succeed(e2bw_core *core, e2bw_http_op *op, cJSON *result)
{
	e2bw_call *call = op->call;
	e2bw_http_op_finish(core, op);
	if (!result)
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		e2bw_call_succeed(core, call, result);
}

void e2bw_sandbox_fail_bad_record(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "The E2B backend's answer to %s has no sandboxID",
		op->what);
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, e);
}

/* --- sandbox.get ------------------------------------------------------- */

static void got(e2bw_core *core, e2bw_http_op *op)
{
	if (!e2bw_http_ok(op->status)) {
		e2bw_sandbox_fail_status(core, op, e2bw_call_param_str(op->call, "sandbox_id"));
		return;
	}
	cJSON *detail = e2bw_api_json(core, op, 0);
	if (!detail)
		return;
	e2bw_sandbox_remember(core, detail);
	cJSON *rec = e2bw_record_from_detail(&core->config, detail);
	cJSON_Delete(detail);
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(rec, "status");
	if (!rec)
		e2bw_sandbox_fail_bad_record(core, op);
	else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(op->call->params, "metrics")) &&
		cJSON_IsString(status) && !strcmp(status->valuestring, "running")) {
		e2bw_call *call =
			op->call; /* a second request: the latest figures (a paused sandbox has no new ones) */
		e2bw_http_op_finish(core, op);
		e2bw_sandbox_metrics_latest(core, call, rec);
	} else
		e2bw_sandbox_succeed(core, op, rec);
}

void e2bw_sandbox_get(e2bw_core *core, e2bw_call *call)
{
	sandbox_request(core, call, "GET", "/sandboxes/", "", NULL, got);
}

/* --- sandbox.list ------------------------------------------------------ */

static int list_request(e2bw_core *core, e2bw_call *call, const char *next_token);

static void listed(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_sandbox_fail_status(core, op, NULL);
		return;
	}
	cJSON *page = e2bw_api_json(core, op, 1);
	if (!page)
		return;
	cJSON *all = cJSON_GetObjectItemCaseSensitive(call->scratch, "sandboxes");
	const cJSON *item;
	cJSON_ArrayForEach(item, page) {
		cJSON *rec = cJSON_IsObject(item) ? e2bw_record_from_detail(&core->config, item) : NULL;
		if (!rec) {
			cJSON_Delete(page);
			e2bw_sandbox_fail_bad_record(core, op);
			return;
		}
		e2bw_push(all, rec);
	}
	cJSON_Delete(page);
	if (e2bw_alloc_failures() !=
		core->alloc_mark) { /* this page may be partial: the whole list would be */
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}

	char token[512] = "";
	e2bw_http_header(op, "x-next-token", token, sizeof token);
	e2bw_http_op_finish(core, op);
	int one_page = e2bw_call_param_num(call, "limit") != NULL;
	if (token[0] && !one_page) {
		cJSON *pages = cJSON_GetObjectItemCaseSensitive(call->scratch, "pages");
		cJSON *last = cJSON_GetObjectItemCaseSensitive(call->scratch, "last_token");
		if (!strcmp(last->valuestring, token) || pages->valuedouble >= LIST_MAX_PAGES) {
			e2bw_call_fail(core, call,
				e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
					"The E2B backend's list paging does not end (X-Next-Token repeats or exceeds %d pages)",
					LIST_MAX_PAGES));
			return;
		}
		cJSON_SetNumberValue(pages, pages->valuedouble + 1);
		/* scratch strings are set in place: cJSON's Replace* corrupts the object
     * when its key copy fails */
		if (!cJSON_SetValuestring(last, token)) {
			e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
			return;
		}
		list_request(core, call, token);
		return;
	}
	cJSON *result = cJSON_CreateObject();
	e2bw_add(result, "sandboxes", cJSON_DetachItemFromObjectCaseSensitive(call->scratch, "sandboxes"));
	if (token[0])
		cJSON_AddStringToObject(result, "next_token", token);
	else
		cJSON_AddNullToObject(result, "next_token");
	e2bw_call_succeed(core, call, result);
}

/* metadata: E2B wants one query value that is itself a URL-encoded "k=v&k2=v2"
 * (docs/e2b-protocol-notes.md, "Control plane"), so keys and values are encoded
 * twice. */
int e2bw_sandbox_metadata_query(e2bw_buf *q, const cJSON *metadata)
{
	e2bw_buf inner = {0};
	const cJSON *kv;
	int rc = 0;
	cJSON_ArrayForEach(kv, metadata) {
		if (inner.len)
			rc |= e2bw_buf_append_char(&inner, '&');
		rc |= e2bw_url_encode_str(&inner, kv->string);
		rc |= e2bw_buf_append_char(&inner, '=');
		rc |= e2bw_url_encode_str(&inner, kv->valuestring);
	}
	if (inner.len)
		rc |= e2bw_buf_append_str(q, "&metadata=") || e2bw_url_encode(q, inner.data, inner.len);
	e2bw_buf_free(&inner);
	return rc;
}

/* A page too large for the response cap (big metadata) is asked again in
 * halves, down to one sandbox per page, from the same position. */
static void list_failed(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_call *call = op->call;
	cJSON *page = cJSON_GetObjectItemCaseSensitive(call->scratch, "page");
	if (!op->overflowed || page->valuedouble <= 1) {
		e2bw_call_fail(core, call, error);
		return;
	}
	cJSON_Delete(error);
	cJSON_SetNumberValue(page, floor(page->valuedouble / 2));
	const cJSON *token = cJSON_GetObjectItemCaseSensitive(call->scratch, "token");
	list_request(core, call, token->valuestring[0] ? token->valuestring : NULL);
}

static int list_request(e2bw_core *core, e2bw_call *call, const char *next_token)
{
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(call->params, "state");
	const cJSON *metadata = cJSON_GetObjectItemCaseSensitive(call->params, "metadata");
	char number[32];
	snprintf(number, sizeof number, "%d",
		(int)cJSON_GetObjectItemCaseSensitive(call->scratch, "page")->valuedouble);
	cJSON *token = cJSON_GetObjectItemCaseSensitive(call->scratch,
		"token"); /* where the page starts ("": the first) */
	if (next_token != token->valuestring && !cJSON_SetValuestring(token, next_token ? next_token : "")) {
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return -1;
	}
	next_token = token->valuestring[0] ? token->valuestring : NULL;
	e2bw_buf q = {0};
	int rc = e2bw_buf_append_str(&q, "/v2/sandboxes?limit=") || e2bw_buf_append_str(&q, number);
	if (cJSON_IsString(state)) {
		rc |= e2bw_buf_append_str(&q, "&state=") || e2bw_buf_append_str(&q, state->valuestring);
	} else if (cJSON_IsArray(state)) {
		rc |= e2bw_buf_append_str(&q, "&state=");
		const cJSON *s;
		int first = 1;
		cJSON_ArrayForEach(s, state) {
			rc |= (!first && e2bw_buf_append_char(&q, ',')) ||
				e2bw_buf_append_str(&q, s->valuestring);
			first = 0;
		}
	}
	if (cJSON_IsObject(metadata))
		rc |= e2bw_sandbox_metadata_query(&q, metadata);
	if (next_token)
		rc |= e2bw_buf_append_str(&q, "&nextToken=") || e2bw_url_encode_str(&q, next_token);
	e2bw_http_op *op = NULL;
	if (rc)
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
	else
		op = e2bw_api_request(core, call, "GET", q.data, NULL, listed);
	if (op)
		op->on_fail = list_failed;
	e2bw_buf_free(&q);
	return op ? 0 : -1;
}

void e2bw_sandbox_list(e2bw_core *core, e2bw_call *call)
{
	call->scratch = cJSON_CreateObject();
	const cJSON *limit = e2bw_call_param_num(call, "limit");
	if (!call->scratch || !cJSON_AddArrayToObject(call->scratch, "sandboxes") ||
		!cJSON_AddNumberToObject(call->scratch, "pages", 1) ||
		!cJSON_AddStringToObject(call->scratch, "last_token", "") ||
		!cJSON_AddNumberToObject(call->scratch, "page", limit ? limit->valuedouble : LIST_PAGE) ||
		!cJSON_AddStringToObject(call->scratch, "token", "")) {
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	list_request(core, call, e2bw_call_param_str(call, "next_token"));
}

/* --- sandbox.kill ------------------------------------------------------ */

static cJSON *id_result(const e2bw_call *call)
{
	cJSON *r = cJSON_CreateObject();
	if (r)
		cJSON_AddStringToObject(r, "sandbox_id", e2bw_call_param_str(call, "sandbox_id"));
	return r;
}

static void killed(e2bw_core *core, e2bw_http_op *op)
{
	/* Killing a sandbox that is already gone is not an error
   * (docs/plugin-contract.md, "Errors"). */
	if (!e2bw_http_ok(op->status) && op->status != 404) {
		e2bw_sandbox_fail_status(core, op, e2bw_call_param_str(op->call, "sandbox_id"));
		return;
	}
	e2bw_sandbox_forget(core, e2bw_call_param_str(op->call, "sandbox_id"));
	cJSON *r = id_result(op->call);
	cJSON_AddBoolToObject(r, "killed", e2bw_http_ok(op->status));
	e2bw_sandbox_succeed(core, op, r);
}

void e2bw_sandbox_kill(e2bw_core *core, e2bw_call *call)
{
	sandbox_request(core, call, "DELETE", "/sandboxes/", "", NULL, killed);
}

/* --- sandbox.set_timeout ---------------------------------------------- */

static void timeout_set(e2bw_core *core, e2bw_http_op *op)
{
	if (!e2bw_http_ok(op->status)) {
		e2bw_sandbox_fail_status(core, op, e2bw_call_param_str(op->call, "sandbox_id"));
		return;
	}
	cJSON *r = id_result(op->call);
	cJSON_AddNumberToObject(r, "timeout",
		whole_seconds(e2bw_call_param_num(op->call, "timeout")->valuedouble));
	e2bw_sandbox_succeed(core, op, r);
}

void e2bw_sandbox_set_timeout(e2bw_core *core, e2bw_call *call)
{
	cJSON *body = cJSON_CreateObject();
	cJSON_AddNumberToObject(body, "timeout",
		whole_seconds(e2bw_call_param_num(call, "timeout")->valuedouble));
	sandbox_request(core, call, "POST", "/sandboxes/", "/timeout", body, timeout_set);
	cJSON_Delete(body);
}

/* --- sandbox.pause ----------------------------------------------------- */

static void paused(e2bw_core *core, e2bw_http_op *op)
{
	/* 409: already paused (or changing state) — pausing is idempotent. */
	if (!e2bw_http_ok(op->status) && op->status != 409) {
		e2bw_sandbox_fail_status(core, op, e2bw_call_param_str(op->call, "sandbox_id"));
		return;
	}
	cJSON *r = id_result(op->call);
	cJSON_AddStringToObject(r, "status", "paused");
	cJSON_AddBoolToObject(r, "changed", e2bw_http_ok(op->status));
	e2bw_sandbox_succeed(core, op, r);
}

void e2bw_sandbox_pause(e2bw_core *core, e2bw_call *call)
{
	sandbox_request(core, call, "POST", "/sandboxes/", "/pause", NULL, paused);
}

/* --- sandbox.connect / sandbox.resume ----------------------------------
 * E2B's connect route sets the lifetime to `timeout`, or to 300 s when none
 * is given — which silently SHORTENS a sandbox created with a longer one.
 * Without an explicit timeout we therefore look first: a running sandbox is
 * returned as it is (no connect call at all); a paused one is resumed with
 * the larger of its remaining lifetime and E2B's default. */

enum {
	CONNECT_LOOK = 1,
	CONNECT_RESUME,
	CONNECT_FINAL_LOOK
};

static void connect_step(e2bw_core *core, e2bw_http_op *op);

static void connect_issue(e2bw_core *core, e2bw_call *call, int step, double timeout_s)
{
	call->step = step;
	if (step == CONNECT_RESUME) {
		cJSON *body = cJSON_CreateObject();
		cJSON_AddNumberToObject(body, "timeout", whole_seconds(timeout_s));
		sandbox_request(core, call, "POST", "/v2/sandboxes/", "/connect", body, connect_step);
		cJSON_Delete(body);
	} else {
		sandbox_request(core, call, "GET", "/sandboxes/", "", NULL, connect_step);
	}
}

/* The lifetime a paused sandbox had left, in seconds; -1 when unknown. The
 * local backend says it (lifetimeLeft, its extension). E2B does not: its
 * endAt is then the moment of the pause, so the time from now to endAt is
 * at most 0 and the default applies; a backend whose endAt stays ahead
 * while paused gets that time. */
static double paused_lifetime_left(const cJSON *detail, double now_ms)
{
	const cJSON *left = cJSON_GetObjectItemCaseSensitive(detail, "lifetimeLeft");
	if (cJSON_IsNumber(left))
		return left->valuedouble;
	const cJSON *end = cJSON_GetObjectItemCaseSensitive(detail, "endAt");
	double end_ms;
	if (!cJSON_IsString(end) || e2bw_rfc3339_ms(end->valuestring, &end_ms) != 0)
		return -1;
	return (end_ms - now_ms) / 1000.0;
}

static void connect_step(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_sandbox_fail_status(core, op, e2bw_call_param_str(call, "sandbox_id"));
		return;
	}
	if (call->step == CONNECT_RESUME) { /* 200 or 201: now running; read its record */
		e2bw_http_op_finish(core, op);
		connect_issue(core, call, CONNECT_FINAL_LOOK, 0);
		return;
	}
	cJSON *detail = e2bw_api_json(core, op, 0);
	if (!detail)
		return;
	const cJSON *state = cJSON_GetObjectItemCaseSensitive(detail, "state");
	int is_paused = cJSON_IsString(state) && !strcmp(state->valuestring, "paused");
	if (call->step == CONNECT_LOOK && is_paused) {
		double left = paused_lifetime_left(detail, core->now);
		cJSON_Delete(detail);
		e2bw_http_op_finish(core, op);
		connect_issue(core, call, CONNECT_RESUME,
			left > E2B_CONNECT_DEFAULT_TIMEOUT_S ? left : E2B_CONNECT_DEFAULT_TIMEOUT_S);
		return;
	}
	e2bw_sandbox_remember(core, detail);
	cJSON *rec = e2bw_record_from_detail(&core->config, detail);
	cJSON_Delete(detail);
	if (!rec)
		e2bw_sandbox_fail_bad_record(core, op);
	else
		e2bw_sandbox_succeed(core, op, rec);
}

void e2bw_sandbox_connect(e2bw_core *core, e2bw_call *call)
{
	const cJSON *timeout = e2bw_call_param_num(call, "timeout");
	if (timeout)
		connect_issue(core, call, CONNECT_RESUME, timeout->valuedouble);
	else
		connect_issue(core, call, CONNECT_LOOK, 0);
}
