/* http_ops.c — HTTP requests the core asks the host to perform: building the
 * request action, collecting the response, deadlines and transport failures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "alloc.h"
#include "errors.h"
#include "http_ops.h"
#include "json_add.h"
#include "redact.h"

static char *dup_range(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* "scheme://host[:port]" of a URL the config already validated. */
static char *origin_of(const char *url)
{
	const char *host = strstr(url, "://");
	host = host ? host + 3 : url;
	return dup_range(url, (size_t)(host - url) + strcspn(host, "/"));
}

static void op_free(e2bw_http_op *op)
{
	if (op->owner_free)
		op->owner_free(op->owner);
	free(op->what);
	free(op->origin);
	e2bw_buf_free(&op->headers);
	e2bw_buf_free(&op->body);
	free(op);
}

static void op_unlink(e2bw_core *core, e2bw_http_op *op)
{
	for (e2bw_http_op **p = &core->ops; *p; p = &(*p)->next) {
		if (*p == op) {
			*p = op->next;
			return;
		}
	}
}

static e2bw_http_op *op_find(e2bw_core *core, uint32_t id)
{
	for (e2bw_http_op *op = core->ops; op; op = op->next)
		if (op->id == id)
			return op;
	return NULL;
}

e2bw_http_op *e2bw_http_start(e2bw_core *core, const e2bw_http_spec *spec)
{
	e2bw_http_op *op = calloc(1, sizeof *op);
	cJSON *head = cJSON_CreateObject();
	cJSON *list = cJSON_CreateArray();
	char *head_text = NULL;
	uint8_t *body = spec->body_given;
	if (!op || !head || !list)
		goto oom;
	op->core = core;
	op->id = ++core->next_op_id;
	if (op->id == 0)
		op->id = ++core->next_op_id; /* 0 means "no op" to the host */
	op->timeout_ms = spec->timeout_ms;
	op->deadline = core->now + spec->timeout_ms;
	op->what = dup_range(spec->what, strlen(spec->what));
	op->origin = origin_of(spec->url);
	if (!op->what || !op->origin)
		goto oom;

	cJSON_AddNumberToObject(head, "op", op->id);
	cJSON_AddStringToObject(head, "method", spec->method);
	cJSON_AddStringToObject(head, "url", spec->url);
	for (const char *const *h = spec->headers; h && h[0]; h += 2) {
		cJSON *pair = cJSON_CreateArray();
		if (!pair || !e2bw_push(list, pair))
			goto oom;
		if (!e2bw_push(pair, cJSON_CreateString(h[0])) || !e2bw_push(pair, cJSON_CreateString(h[1])))
			goto oom;
	}
	e2bw_add(head, "headers", list);
	list = NULL;
	/* a request (or its body, built by the caller) missing a member that an
   * allocation failed to add is never sent */
	if (e2bw_alloc_failures() != core->alloc_mark)
		goto oom;
	head_text = cJSON_PrintUnformatted(head);
	if (!head_text)
		goto oom;
	if (spec->body_len && !body) {
		body = malloc(spec->body_len);
		if (!body)
			goto oom;
		memcpy(body, spec->body, spec->body_len);
	}
	cJSON_Delete(head);
	if (e2bw_emit_http(core, op->id, head_text, body, spec->body_len) != 0) {
		op_free(op); /* emit freed head_text and body */
		return NULL;
	}
	op->next = core->ops;
	core->ops = op;
	return op;

oom:
	free(head_text);
	free(body);
	cJSON_Delete(list);
	cJSON_Delete(head);
	if (op)
		op_free(op);
	return NULL;
}

int e2bw_http_header(const e2bw_http_op *op, const char *name, char *out, size_t cap)
{
	size_t name_len = strlen(name);
	const char *p = op->headers.data, *end = p ? p + op->headers.len : NULL;
	while (p && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *colon = memchr(p, ':', (size_t)(eol - p));
		if (colon && (size_t)(colon - p) == name_len) {
			size_t i = 0;
			for (; i < name_len; i++) {
				char a = p[i], b = name[i];
				if (a >= 'A' && a <= 'Z')
					a = (char)(a + 32);
				if (b >= 'A' && b <= 'Z')
					b = (char)(b + 32);
				if (a != b)
					break;
			}
			if (i == name_len) {
				const char *v = colon + 1, *ve = eol;
				while (v < ve && (*v == ' ' || *v == '\t'))
					v++;
				while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
					ve--;
				size_t n = (size_t)(ve - v);
				if (cap == 0)
					return 1;
				if (n > cap - 1)
					n = cap - 1;
				memcpy(out, v, n);
				out[n] = '\0';
				return 1;
			}
		}
		p = eol + 1;
	}
	return 0;
}

void e2bw_http_op_finish(e2bw_core *core, e2bw_http_op *op)
{
	op_unlink(core, op);
	op_free(op);
}

void e2bw_http_cancel_call(e2bw_core *core, e2bw_call *call)
{
	e2bw_http_op **p = &core->ops;
	while (*p) {
		e2bw_http_op *op = *p;
		if (op->call == call) {
			*p = op->next;
			e2bw_emit_cancel(core, op->id);
			op_free(op);
		} else {
			p = &op->next;
		}
	}
}

void e2bw_http_ops_free(e2bw_core *core)
{
	while (core->ops) {
		e2bw_http_op *next = core->ops->next;
		op_free(core->ops);
		core->ops = next;
	}
}

/* Ends the op with `error`, routed to its owner. The op is unlinked first so
 * that the owner's cleanup does not ask the host to cancel a request that is
 * over; `cancel` asks the host to stop it when the core gives up first. */
static void op_fail(e2bw_core *core, e2bw_http_op *op, cJSON *error, int cancel)
{
	op_unlink(core, op);
	if (cancel)
		e2bw_emit_cancel(core, op->id);
	if (op->on_fail)
		op->on_fail(core, op, error); /* the owner's own callback */
	else
		cJSON_Delete(error); /* fire-and-forget */
	op_free(op);
}

/* A stream's deadline moves on with every sign of life. */
static void touch(e2bw_core *core, e2bw_http_op *op)
{
	if (op->idle_ms > 0)
		op->deadline = core->now + op->idle_ms;
}

/* Where a redirect pointed, as origin + path: no credentials, no query. */
static void redirect_target(const e2bw_http_op *op, const char *loc, e2bw_buf *out)
{
	const char *scheme = strstr(loc, "://");
	const char *p = loc;
	int has_host = 1;
	if (scheme && scheme < loc + strcspn(loc, "/?#")) { /* scheme://host/path */
		e2bw_buf_append(out, loc, (size_t)(scheme + 3 - loc));
		p = scheme + 3;
	} else if (loc[0] == '/' && loc[1] == '/') { /* //host/path: the request's scheme */
		e2bw_buf_append(out, op->origin, (size_t)(strstr(op->origin, "://") + 3 - op->origin));
		p = loc + 2;
	} else { /* a path on the same origin */
		e2bw_buf_append_str(out, op->origin);
		if (loc[0] != '/')
			e2bw_buf_append_char(out, '/');
		has_host = 0;
	}
	if (has_host) { /* user:password@ is dropped */
		const char *at = NULL;
		for (size_t i = 0, authority = strcspn(p, "/?#"); i < authority; i++)
			if (p[i] == '@')
				at = p + i;
		if (at)
			p = at + 1;
	}
	size_t n = strcspn(p, "?#");
	for (size_t i = 0; i < n && i < 200; i++)
		e2bw_buf_append_char(out, (p[i] > 0x20 && p[i] < 0x7f) ? p[i] : '_');
}

static cJSON *redirect_error(e2bw_http_op *op, int status, const char *headers, size_t headers_len)
{
	char loc[1024] = "";
	e2bw_buf where = {0};
	if (headers && e2bw_buf_append(&op->headers, headers, headers_len < 65536 ? headers_len : 65536) == 0)
		e2bw_http_header(op, "location", loc, sizeof loc);
	if (loc[0])
		redirect_target(op, loc, &where);
	cJSON *e;
	if (where.data)
		e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
			"%s at %s answered with a redirect (HTTP %d) to %s; redirects are not followed",
			op->what, op->origin, status, where.data);
	else
		e = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
			"%s at %s answered with a redirect%s; redirects are not followed", op->what,
			op->origin, status ? "" : " (its target hidden by the platform)");
	if (status)
		e2bw_error_set_num(e, "http_status", status);
	e2bw_error_set_str(e, "redirect", where.data);
	e2bw_buf_free(&where);
	return e;
}

void e2bw_core_http_head(e2bw_core *core, uint32_t id, int status, const char *headers, size_t headers_len,
	double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_http_op *op = op_find(core, id);
	if (!op || op->status)
		return;
	if (status == 0 || (status >= 300 && status < 400)) {
		/* Redirects are never followed (a 307 would carry X-API-Key or the envd
     * token elsewhere; an envd pointing at an internal URL would make the
     * host fetch it). 0: a browser's opaque redirect, target hidden. */
		cJSON *e = redirect_error(op, status, headers, headers_len);
		op_fail(core, op, e, 1);
		return;
	}
	if (status < 100 || status > 599) {
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The E2B backend sent an invalid HTTP status (%d) to %s", status, op->what),
			1);
		return;
	}
	op->status = status;
	touch(core, op);
	if (headers_len > 64 * 1024)
		headers_len = 64 * 1024; /* only a few small headers matter */
	if (headers && e2bw_buf_append(&op->headers, headers, headers_len) != 0)
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory reading the response to %s",
				op->what),
			1);
}

void e2bw_core_http_body(e2bw_core *core, uint32_t id, const uint8_t *data, size_t len, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_http_op *op = op_find(core, id);
	if (!op)
		return;
	if (!op->status) {
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The host reported body bytes before the response head for %s", op->what),
			1);
		return;
	}
	touch(core, op);
	if (op->on_data) {
		op->on_data(core, op, data, len);
		return;
	}
	if (op->body.len + len > E2BW_MAX_RESPONSE_BYTES) {
		op->overflowed = 1;
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The E2B backend's response to %s exceeds %u bytes", op->what,
				(unsigned)E2BW_MAX_RESPONSE_BYTES),
			1);
		return;
	}
	if (e2bw_buf_append(&op->body, data, len) != 0)
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory reading the response to %s",
				op->what),
			1);
}

void e2bw_core_http_end(e2bw_core *core, uint32_t id, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_http_op *op = op_find(core, id);
	if (!op)
		return;
	if (!op->status) {
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "The E2B backend closed %s without a response",
				op->what),
			0);
		return;
	}
	if (op->on_done)
		op->on_done(core, op);
	else
		e2bw_http_op_finish(core, op);
}

void e2bw_core_http_fail(e2bw_core *core, uint32_t id, int failure, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_http_op *op = op_find(core, id);
	if (!op)
		return;
	if (failure == E2BW_NET_PROTOCOL) {
		op_fail(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"The E2B backend at %s sent a malformed HTTP response to %s", op->origin,
				op->what),
			0);
		return;
	}
	const char *why;
	switch (failure) {
	case E2BW_NET_REFUSED:
		why = "connection refused";
		break;
	case E2BW_NET_DNS:
		why = "host name not resolved";
		break;
	case E2BW_NET_RESET:
		why = op->status ? "connection cut while reading the response"
				 : "connection closed before a response";
		break;
	case E2BW_NET_TLS:
		why = "TLS failure";
		break;
	default:
		why = "network error";
		break;
	}
	cJSON *error = e2bw_error_new(E2BW_ERR_UNREACHABLE,
		"Cannot reach the E2B backend at %s (%s) during %s", op->origin, why, op->what);
	op_fail(core, op, error, 0);
}

void e2bw_core_http_hold(e2bw_core *core, uint32_t id, int held, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_http_op *op = op_find(core, id);
	if (!op || op->idle_ms <= 0 || !op->status)
		return; /* only running streams idle */
	op->held = held != 0;
	touch(core, op);
}

/* A held op waits on the caller, not on time. */
static int timed(const e2bw_http_op *op)
{
	return !op->held;
}

double e2bw_http_next_deadline(const e2bw_core *core)
{
	double best = -1;
	for (const e2bw_http_op *op = core->ops; op; op = op->next)
		if (timed(op) && (best < 0 || op->deadline < best))
			best = op->deadline;
	return best;
}

void e2bw_http_tick(e2bw_core *core)
{
	/* Failing an op's owner can drop other ops, so rescan after each. */
	for (;;) {
		e2bw_http_op *late = NULL;
		for (e2bw_http_op *op = core->ops; op; op = op->next)
			if (timed(op) && op->deadline <= core->now) {
				late = op;
				break;
			}
		if (!late)
			return;
		cJSON *error;
		if (late->idle_ms > 0 && late->status)
			error = e2bw_error_new(E2BW_ERR_UNREACHABLE,
				"envd sent nothing, not even a keepalive, for %g s during %s: the sandbox is unreachable",
				late->idle_ms / 1000.0, late->what);
		else
			error = e2bw_error_new(E2BW_ERR_TIMEOUT,
				"The E2B backend did not answer %s within %g s (request_timeout)", late->what,
				late->timeout_ms / 1000.0);
		op_fail(core, late, error, 1);
	}
}
