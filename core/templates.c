/* templates.c — templates.build (templates.h). The call's state between
 * requests is its scratch: {plan, lines, template_id, build_id, copy (the
 * next step to look at for files), offset (logs seen), tail (the last log
 * messages), started and deadline (the call's times), final (ready/error
 * once seen), reason}. */
#include "templates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "e2b_api.h"
#include "errors.h"
#include "json_add.h"
#include "jsonrpc.h"
#include "names.h"
#include "redact.h"
#include "template_api.h"
#include "template_context.h"
#include "template_plan.h"
#include "timers.h"

#define POLL_MS 200.0         /* the SDK's logsRefreshFrequency */
#define DEFAULT_WAIT_S 3600.0 /* how long a build may take before the call gives up waiting */
#define TAIL 20               /* log messages a build_failed error carries */

static const char *str_of(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *scratch(const e2bw_call *call, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(call->scratch, name);
}
static double scratch_num(const e2bw_call *call, const char *name)
{
	return scratch(call, name)->valuedouble;
}
static void fail_oom(e2bw_core *core, e2bw_call *call)
{
	e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
}

static void fail_op(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_call *call = op->call;
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, error);
}

/* A templates.log notification of this call (takes log); out of memory,
 * the entry is dropped rather than sent without its request_id. */
static void notify_log(e2bw_core *core, e2bw_call *call, cJSON *log)
{
	char *id = e2bw_rpc_id_text(call->id);
	if (log && id && e2bw_add(log, "request_id", cJSON_CreateRaw(id)))
		e2bw_notify(core, "templates.log", log, 0);
	else
		cJSON_Delete(log);
	free(id);
}

static const cJSON *copy_step(const e2bw_call *call)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(scratch(call, "plan"), "steps"),
		(int)scratch_num(call, "copy"));
}
static const char *copy_src(const e2bw_call *call)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(copy_step(call), "args"), 0)->valuestring;
}

static void next_copy(e2bw_core *core, e2bw_call *call);
static void poll(e2bw_core *core, e2bw_call *call);

static void stop_polling(e2bw_core *core, void *call)
{
	e2bw_timer_cancel(core, call);
}
static void poll_now(e2bw_core *core, void *call)
{
	poll(core, call);
}

static cJSON *result(const e2bw_call *call, const char *status)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "template_id", str_of(call->scratch, "template_id"));
	cJSON_AddStringToObject(r, "name", str_of(call->params, "name"));
	cJSON_AddStringToObject(r, "build_id", str_of(call->scratch, "build_id"));
	cJSON_AddStringToObject(r, "status", status);
	return r;
}

/* --- the end of a build ---------------------------------------------------- */

/* "RUN make" for E2B's step name ("3", "base", "finalize"), and its
 * Dockerfile line (0: none). */
static void describe_step(const e2bw_call *call, const char *step, char *out, size_t cap, int *line)
{
	const cJSON *plan = scratch(call, "plan"), *lines = scratch(call, "lines");
	int k = 0, digits = 0;
	while (step && step[digits] >= '0' && step[digits] <= '9' && digits < 9)
		k = k * 10 + (step[digits++] - '0');
	const cJSON *s = digits && !step[digits] && k > 0
		? cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(plan, "steps"), k - 1)
		: NULL;
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(s, "args");
	out[0] = '\0';
	*line = 0;
	if (s) {
		const char *type = str_of(s, "type"), *a0 = cJSON_GetArrayItem(args, 0)->valuestring;
		snprintf(out, cap, "%s %.200s%s%.100s", type, a0, strcmp(type, "COPY") ? "" : " ",
			strcmp(type, "COPY") ? "" : cJSON_GetArrayItem(args, 1)->valuestring);
		*line = (int)cJSON_GetArrayItem(lines, k)->valuedouble;
	} else if (step && !strcmp(step, "base")) {
		const char *from = str_of(plan, "fromImage");
		snprintf(out, cap, "%s %.200s", from ? "FROM" : "FROM TEMPLATE",
			from ? from : str_of(plan, "fromTemplate"));
		*line = (int)cJSON_GetArrayItem(lines, 0)->valuedouble;
	} else if (step && !strcmp(step, "finalize")) {
		snprintf(out, cap, "the start and ready commands");
	}
}

static void build_failed(e2bw_core *core, e2bw_call *call)
{
	const cJSON *reason = scratch(call, "reason");
	const cJSON *step_item = cJSON_GetObjectItemCaseSensitive(reason, "step");
	char step[32] = "", what[400];
	if (cJSON_IsString(step_item))
		snprintf(step, sizeof step, "%.31s", step_item->valuestring);
	if (cJSON_IsNumber(step_item))
		snprintf(step, sizeof step, "%.0f", step_item->valuedouble);
	int line;
	describe_step(call, step[0] ? step : NULL, what, sizeof what, &line);
	const char *why = str_of(reason, "message");
	char *clean =
		e2bw_redact_raw(&core->secrets, why ? why : "Unknown error"); /* before it is cut to length */
	cJSON *e;
	if (!step[0])
		e = e2bw_error_new(E2BW_ERR_BUILD_FAILED, "Template build failed: %s", clean ? clean : "");
	else if (line)
		e = e2bw_error_new(E2BW_ERR_BUILD_FAILED,
			"Template build failed at step %s (Dockerfile line %d: %s): %s", step, line, what,
			clean ? clean : "");
	else
		e = e2bw_error_new(E2BW_ERR_BUILD_FAILED, "Template build failed at step %s%s%s%s: %s", step,
			what[0] ? " (" : "", what, what[0] ? ")" : "", clean ? clean : "");
	free(clean);
	e2bw_error_set_str(e, "template_id", str_of(call->scratch, "template_id"));
	e2bw_error_set_str(e, "build_id", str_of(call->scratch, "build_id"));
	e2bw_error_set_str(e, "step", step[0] ? step : NULL);
	e2bw_error_set_str(e, "instruction", what[0] ? what : NULL);
	if (line)
		e2bw_error_set_num(e, "line", line);
	/* the tail of the log as it streamed, else the entries E2B gives with the reason */
	cJSON *tail = cJSON_DetachItemFromObjectCaseSensitive(call->scratch, "tail");
	const cJSON *entry;
	if (!cJSON_GetArraySize(tail))
		cJSON_ArrayForEach(entry, cJSON_GetObjectItemCaseSensitive(reason, "logEntries")) {
			if (str_of(entry, "message"))
				e2bw_push(tail, cJSON_CreateString(str_of(entry, "message")));
		}
	cJSON *data = cJSON_GetObjectItemCaseSensitive(e, "data");
	if (data)
		e2bw_add(data, "logs", tail);
	else
		cJSON_Delete(tail);
	e2bw_call_fail(core, call, e);
}

static void build_ended(e2bw_core *core, e2bw_call *call)
{
	const char *final = str_of(call->scratch, "final");
	if (!strcmp(final, "ready"))
		e2bw_call_succeed(core, call, result(call, "ready"));
	else
		build_failed(core, call);
}

/* --- status and logs ----------------------------------------------------------- */

static void polled(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, str_of(call->scratch, "template_id"));
		return;
	}
	cJSON *info = e2bw_api_json(core, op, 0);
	if (!info)
		return;
	const char *status = str_of(info, "status");
	const cJSON *entries = cJSON_GetObjectItemCaseSensitive(info, "logEntries"), *entry;
	cJSON *tail = scratch(call, "tail");
	int known = status &&
		(!strcmp(status, "building") || !strcmp(status, "waiting") || !strcmp(status, "ready") ||
			!strcmp(status, "error"));
	if (!known || (entries && !cJSON_IsArray(entries))) {
		cJSON *e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "The E2B backend's build status (%s) has %s",
			op->what,
			known ? "logEntries that are not an array"
			      : "no status of building, waiting, ready or error");
		cJSON_Delete(info);
		fail_op(core, op, e);
		return;
	}
	cJSON_ArrayForEach(entry, entries) {
		cJSON *log = e2bw_template_log(entry);
		if (!log)
			continue;
		e2bw_push(tail, cJSON_CreateString(str_of(log, "message")));
		if (cJSON_GetArraySize(tail) > TAIL)
			cJSON_DeleteItemFromArray(tail, 0);
		notify_log(core, call, log);
	}
	int count = cJSON_GetArraySize(entries);
	cJSON_SetNumberValue(scratch(call, "offset"), scratch_num(call, "offset") + count);
	int ended = strcmp(status, "building") && strcmp(status, "waiting");
	if (ended && !scratch(call, "final")) {
		cJSON_AddStringToObject(call->scratch, "final", status);
		e2bw_add(call->scratch, "reason", cJSON_DetachItemFromObjectCaseSensitive(info, "reason"));
	}
	cJSON_Delete(info);
	e2bw_http_op_finish(core, op);
	if (e2bw_alloc_failures() != core->alloc_mark) { /* the end may not have been noted */
		fail_oom(core, call);
		return;
	}
	double deadline = scratch_num(call, "deadline");
	if (scratch(call, "final")) {
		/* as the SDK: after the end, read on until a poll brings no new entry */
		if (count && core->now < deadline)
			poll(core, call);
		else
			build_ended(core, call);
		return;
	}
	if (core->now >= deadline) {
		cJSON *e = e2bw_error_new(E2BW_ERR_TIMEOUT,
			"The template build did not finish within %g s (timeout); it goes on in the backend: follow it with templates.get",
			(deadline - scratch_num(call, "started")) / 1000.0);
		e2bw_error_set_str(e, "template_id", str_of(call->scratch, "template_id"));
		e2bw_call_fail(core, call,
			e2bw_error_set_str(e, "build_id", str_of(call->scratch, "build_id")));
		return;
	}
	double at = core->now + POLL_MS;
	if (e2bw_timer_start(core, at < deadline ? at : deadline, poll_now, call))
		fail_oom(core, call);
}

static void poll(e2bw_core *core, e2bw_call *call)
{
	char query[64];
	snprintf(query, sizeof query, "/status?logsOffset=%.0f", scratch_num(call, "offset"));
	const char *parts[] = {"/templates/", str_of(call->scratch, "template_id"), "/builds/",
		str_of(call->scratch, "build_id"), query, NULL};
	e2bw_template_request(core, call, "GET", parts, NULL, polled);
}

/* --- starting the build ---------------------------------------------------------- */

static void triggered(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, str_of(call->scratch, "template_id"));
		return;
	}
	e2bw_http_op_finish(core, op);
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(call->params, "wait")))
		e2bw_call_succeed(core, call, result(call, "building"));
	else
		poll(core, call);
}

static void trigger(e2bw_core *core, e2bw_call *call)
{
	const char *parts[] = {"/v2/templates/", str_of(call->scratch, "template_id"), "/builds/",
		str_of(call->scratch, "build_id"), NULL};
	e2bw_template_request(core, call, "POST", parts, scratch(call, "plan"), triggered);
}

/* --- the files of COPY steps ---------------------------------------------------- */

static void copy_done(e2bw_core *core, e2bw_call *call)
{
	cJSON_SetNumberValue(scratch(call, "copy"), scratch_num(call, "copy") + 1);
	next_copy(core, call);
}

static void uploaded(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		fail_op(core, op, e2bw_api_error(op, NULL));
		return;
	}
	e2bw_http_op_finish(core, op);
	copy_done(core, call);
}

static int http_url(const char *url)
{
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return 0;
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return 0;
	return 1;
}

/* PUT the step's files to the link, with the link's headers (not the API
 * key: the link is the backend's storage, as for the SDK). */
static void upload(e2bw_core *core, e2bw_call *call, const cJSON *link)
{
	const char *url = str_of(link, "url"), *src = copy_src(call);
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(link, "headers"), *h;
	if (!cJSON_IsObject(given))
		given = NULL;
	if (!http_url(url)) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The E2B backend's upload link for '%.200s' is not an http(s) URL", src));
		return;
	}
	e2bw_context_entry *picked = NULL;
	size_t n = 0, count = 0;
	e2bw_buf body = {0};
	const char **headers = calloc((size_t)cJSON_GetArraySize(given) * 2 + 1, sizeof *headers);
	int rc = !headers ||
		e2bw_context_select(cJSON_GetObjectItemCaseSensitive(call->params, "context"), src, &picked,
			&n);
	rc = rc ? -1 : e2bw_context_targz(picked, n, &body);
	e2bw_context_entries_free(picked, n);
	if (!headers)
		given = NULL;
	cJSON_ArrayForEach(h, given) {
		/* the transport sets the length of the body it sends (as the SDK does) */
		if (!cJSON_IsString(h) || e2bw_name_equal_nocase(h->string, "content-length"))
			continue;
		headers[count++] = h->string;
		headers[count++] = h->valuestring;
	}
	char what[300];
	snprintf(what, sizeof what, "the upload of '%.200s'", src);
	e2bw_http_spec spec = {"PUT", url, what, headers, NULL, body.len, call->request_timeout_ms, NULL};
	e2bw_http_op *op = NULL;
	if (!rc) {
		spec.body_given = (uint8_t *)e2bw_buf_take(&body, NULL);
		op = e2bw_http_start(core, &spec);
	}
	e2bw_buf_free(&body);
	free(headers);
	if (op) {
		e2bw_call_own(op, call);
		op->on_done = uploaded;
	} else if (rc == -2) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
				"Invalid params: a directory under '%.200s' has a path too long for the upload's tar format",
				src));
	} else {
		fail_oom(core, call);
	}
}

static void linked(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, str_of(call->scratch, "template_id"));
		return;
	}
	cJSON *link = e2bw_api_json(core, op, 0);
	if (!link)
		return;
	e2bw_http_op_finish(core, op);
	/* as the SDK: upload when the backend has not got the files and says where */
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(link, "present")) && str_of(link, "url")) {
		upload(core, call, link);
	} else {
		copy_done(core, call);
	}
	cJSON_Delete(link);
}

/* The next COPY step from scratch.copy on asks for its upload link; after
 * the last, the build starts. */
static void next_copy(e2bw_core *core, e2bw_call *call)
{
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(scratch(call, "plan"), "steps");
	for (int i = (int)scratch_num(call, "copy"); i < cJSON_GetArraySize(steps); i++) {
		const cJSON *step = cJSON_GetArrayItem(steps, i);
		if (strcmp(str_of(step, "type"), "COPY"))
			continue;
		cJSON_SetNumberValue(scratch(call, "copy"), i);
		const char *parts[] = {"/templates/", str_of(call->scratch, "template_id"), "/files/",
			str_of(step, "filesHash"), NULL};
		e2bw_template_request(core, call, "GET", parts, NULL, linked);
		return;
	}
	trigger(core, call);
}

/* --- the template ------------------------------------------------------------------ */

static void created(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	if (!e2bw_http_ok(op->status)) {
		e2bw_template_fail(core, op, NULL);
		return;
	}
	cJSON *r = e2bw_api_json(core, op, 0);
	if (!r)
		return;
	const char *tid = str_of(r, "templateID"), *bid = str_of(r, "buildID");
	if (!tid || !tid[0] || !bid || !bid[0]) {
		cJSON_Delete(r);
		fail_op(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The E2B backend's answer to %s has no templateID or buildID", op->what));
		return;
	}
	int added = cJSON_AddStringToObject(call->scratch, "template_id", tid) &&
		cJSON_AddStringToObject(call->scratch, "build_id", bid);
	cJSON_Delete(r);
	e2bw_http_op_finish(core, op);
	if (!added) {
		fail_oom(core, call);
		return;
	}
	next_copy(core, call);
}

void e2bw_templates_build(e2bw_core *core, e2bw_call *call)
{
	cJSON *plan, *lines;
	cJSON *error = e2bw_template_plan(call->params, &plan, &lines);
	if (!plan) {
		e2bw_call_fail(core, call,
			error ? error : e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	/* the registry password is a credential from here on: never in a message */
	const char *password =
		str_of(cJSON_GetObjectItemCaseSensitive(plan, "fromImageRegistry"), "password");
	const cJSON *wait = cJSON_GetObjectItemCaseSensitive(call->params, "timeout");
	double wait_ms = (cJSON_IsNumber(wait) ? wait->valuedouble : DEFAULT_WAIT_S) * 1000.0;
	call->scratch = cJSON_CreateObject();
	call->teardown = stop_polling;
	call->teardown_arg = call;
	/* e2bw_add takes plan and lines whatever happens */
	int ok = (call->scratch != NULL) & e2bw_add(call->scratch, "plan", plan) &
		e2bw_add(call->scratch, "lines", lines);
	ok = ok && cJSON_AddNumberToObject(call->scratch, "copy", 0) &&
		cJSON_AddNumberToObject(call->scratch, "offset", 0) &&
		cJSON_AddArrayToObject(call->scratch, "tail") &&
		cJSON_AddNumberToObject(call->scratch, "started", core->now) &&
		cJSON_AddNumberToObject(call->scratch, "deadline", core->now + wait_ms) &&
		(!password || e2bw_secrets_add(&core->secrets, password, 0) == 0);
	if (!ok) {
		fail_oom(core, call);
		return;
	}
	cJSON *body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "name", str_of(call->params, "name"));
	static const char *const resources[][2] = {{"cpu", "cpuCount"}, {"memory", "memoryMB"},
		{"disk", "minFreeDiskMb"}};
	for (int i = 0; i < 3; i++) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(call->params, resources[i][0]);
		if (cJSON_IsNumber(r))
			cJSON_AddNumberToObject(body, resources[i][1], r->valuedouble);
	}
	e2bw_api_request(core, call, "POST", "/v3/templates", body, created);
	cJSON_Delete(body);
}
