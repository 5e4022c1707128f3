#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"

size_t h_detach = 0;

harness *h_new(void)
{
	harness *h = calloc(1, sizeof *h);
	h->core = e2bw_core_new();
	e2bw_core_set_detach(h->core, h_detach);
	h->now = 1767225600000.0; /* 2026-01-01T00:00:00Z */
	return h;
}

void h_free(harness *h)
{
	e2bw_core_free(h->core);
	for (int i = 0; i < h->ncalls; i++)
		free(h->calls[i].id);
	for (int i = 0; i < h->nsend; i++) {
		cJSON_Delete(h->sends[i]);
		free(h->send_text[i]);
	}
	for (int i = 0; i < h->nhttp; i++) {
		cJSON_Delete(h->https[i].headers);
		free(h->https[i].body);
	}
	free(h);
}

/* A detached output: the member is "" in the message, the body ASCII
 * exactly when flagged (the fuzzers check it is valid UTF-8); the member
 * gets the body. */
static void attach(e2bw_core *core, cJSON *msg)
{
	uint32_t op = e2bw_action_op(core);
	const char *body = (const char *)e2bw_action_body(core);
	size_t n = e2bw_action_body_len(core);
	CHECK(h_detach != 0);
	cJSON *outer = cJSON_GetObjectItemCaseSensitive(msg,
		(op & ~(uint32_t)E2BW_DETACHED_ASCII) == E2BW_DETACHED_DATA ? "params" : "result");
	const char *name = (op & ~(uint32_t)E2BW_DETACHED_ASCII) == E2BW_DETACHED_DATA ? "data" : "content";
	cJSON *member = cJSON_GetObjectItemCaseSensitive(outer, name);
	CHECK(((op & ~(uint32_t)E2BW_DETACHED_ASCII) == E2BW_DETACHED_DATA ||
		      (op & ~(uint32_t)E2BW_DETACHED_ASCII) == E2BW_DETACHED_CONTENT) &&
		cJSON_IsString(member) && !member->valuestring[0]);
	CHECK(n == 0 || body != NULL);
	int ascii = 1;
	for (size_t i = 0; i < n; i++)
		ascii &= (unsigned char)body[i] < 0x80;
	CHECK(!!(op & E2BW_DETACHED_ASCII) == ascii);
	char *copy = malloc(n + 1);
	if (n)
		memcpy(copy, body, n);
	copy[n] = '\0';
	CHECK(strlen(copy) == n); /* output with NUL bytes is not in these tests */
	cJSON *value = cJSON_CreateString(copy);
	if (member && value)
		cJSON_ReplaceItemInObjectCaseSensitive(outer, name, value);
	else
		cJSON_Delete(value);
	free(copy);
}

static struct h_call *call_named(harness *h, const char *id)
{
	for (int i = 0; i < h->ncalls; i++)
		if (strcmp(h->calls[i].id, id) == 0)
			return &h->calls[i];
	return NULL;
}

/* A request submitted through the harness opens a call under its id (ids
 * may repeat, even while calls are open). */
static void call_started(harness *h, const char *json)
{
	cJSON *msg = cJSON_Parse(json);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	char *text = id && !cJSON_IsNull(id) && cJSON_GetObjectItemCaseSensitive(msg, "method")
		? cJSON_PrintUnformatted(id)
		: NULL;
	struct h_call *c = text ? call_named(h, text) : NULL;
	if (c)
		c->open++;
	else if (text && h->ncalls < H_MAX)
		h->calls[h->ncalls++] = (struct h_call){text, 1}, text = NULL;
	free(text);
	cJSON_Delete(msg);
}

/* What the core says a message is (e2bw_message) is what it is: an answer
 * has the id, a notification a method and the request_id of its call; an
 * error ends its call; no message names a call after its last one (for the
 * calls submitted through the harness). */
static void check_message_kind(harness *h, int kind, const cJSON *msg)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	const cJSON *call = id;
	if (kind & E2BW_MESSAGE_ANSWER) {
		CHECK(!(kind & E2BW_MESSAGE_NOTIFICATION) && id != NULL && method == NULL);
		if (cJSON_GetObjectItemCaseSensitive(msg, "error"))
			CHECK(kind & E2BW_MESSAGE_LAST);
	} else {
		call = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(msg, "params"),
			"request_id");
		CHECK((kind & E2BW_MESSAGE_NOTIFICATION) && id == NULL && cJSON_IsString(method) &&
			call != NULL);
		if (!cJSON_IsString(method) || !call)
			return;
		int ends = strcmp(method->valuestring, "exec.exit") == 0 ||
			strcmp(method->valuestring, "files.watch_end") == 0;
		CHECK(!!(kind & E2BW_MESSAGE_LAST) == ends);
	}
	char *text = call ? cJSON_PrintUnformatted(call) : NULL;
	struct h_call *c =
		text && strcmp(text, "null") != 0 ? call_named(h, text) : NULL; /* null: no id to name */
	free(text);
	if (!c)
		return;
	CHECK(c->open > 0); /* a message of a call that had ended */
	if ((kind & E2BW_MESSAGE_LAST) && c->open > 0)
		c->open--;
}

void h_drain(harness *h)
{
	int kind;
	while ((kind = e2bw_core_next_action(h->core)) != E2BW_ACTION_NONE) {
		const char *text = e2bw_action_text(h->core);
		size_t len = e2bw_action_text_len(h->core);
		if (kind == E2BW_ACTION_SEND && h->nsend < H_MAX) {
			CHECK(text != NULL && strlen(text) == len);
			CHECK(memchr(text, '\n', len) == NULL); /* NDJSON-safe */
			h->sends[h->nsend] = cJSON_ParseWithLength(text, len);
			CHECK(h->sends[h->nsend] != NULL);
			check_message_kind(h, e2bw_action_message(h->core), h->sends[h->nsend]);
			if (e2bw_action_op(h->core))
				attach(h->core, h->sends[h->nsend]);
			else
				CHECK(e2bw_action_body_len(h->core) == 0);
			/* as the core wrote it; a detached value follows on a line of its own,
       * so every check of the text (secrets, ids) sees it too */
			size_t blen = e2bw_action_op(h->core) ? e2bw_action_body_len(h->core) : 0;
			h->send_text[h->nsend] = malloc(len + blen + 2);
			memcpy(h->send_text[h->nsend], text, len);
			h->send_text[h->nsend][len] = '\n';
			if (blen)
				memcpy(h->send_text[h->nsend] + len + 1, e2bw_action_body(h->core), blen);
			h->send_text[h->nsend][len + (blen || e2bw_action_op(h->core) ? blen + 1 : 0)] = '\0';
			h->nsend++;
		} else if (kind == E2BW_ACTION_HTTP && h->nhttp < H_MAX) {
			h_http *r = &h->https[h->nhttp++];
			cJSON *head = cJSON_ParseWithLength(text, len);
			CHECK(head != NULL);
			r->op = e2bw_action_op(h->core);
			CHECK_NUM(cJSON_GetObjectItem(head, "op")->valuedouble, r->op);
			snprintf(r->method, sizeof r->method, "%s",
				cJSON_GetObjectItem(head, "method")->valuestring);
			snprintf(r->url, sizeof r->url, "%s", cJSON_GetObjectItem(head, "url")->valuestring);
			r->headers = cJSON_DetachItemFromObject(head, "headers");
			cJSON_Delete(head);
			size_t blen = e2bw_action_body_len(h->core);
			if (blen) {
				r->body = malloc(blen + 1);
				memcpy(r->body, e2bw_action_body(h->core), blen);
				r->body[blen] = '\0';
			}
			r->body_len = blen;
		} else if (kind == E2BW_ACTION_CANCEL && h->ncancel < H_MAX) {
			h->cancels[h->ncancel++] = e2bw_action_op(h->core);
		}
	}
}

/* In detached mode: the longest string param of at least H_DETACH_IN bytes
 * goes beside the message, as a host that takes objects sends it. */
static int submit_detached(harness *h, const char *json)
{
	cJSON *msg = cJSON_Parse(json), *params = cJSON_GetObjectItemCaseSensitive(msg, "params"),
	      *best = NULL, *it;
	if (!cJSON_IsObject(params))
		params = NULL;
	cJSON_ArrayForEach(it, params)
		if (cJSON_IsString(it) && strlen(it->valuestring) >= H_DETACH_IN &&
			(!best || strlen(it->valuestring) > strlen(best->valuestring)))
			best = it;
	if (!best || strstr(json, "\\u0000")) { /* cJSON would cut that string: the text form only */
		cJSON_Delete(msg);
		return 0;
	}
	char *value = best->valuestring;
	best->valuestring = strdup("");
	char *text = cJSON_PrintUnformatted(msg);
	e2bw_core_submit_detached(h->core, text, strlen(text), best->string, strlen(best->string), value,
		strlen(value), h->now);
	free(text);
	free(value);
	cJSON_Delete(msg);
	return 1;
}

void h_submit(harness *h, const char *json)
{
	call_started(h, json);
	if (!h_detach || !submit_detached(h, json))
		e2bw_core_submit(h->core, json, strlen(json), h->now);
	h_drain(h);
}

void h_init(harness *h, const char *config_json)
{
	char msg[2048];
	snprintf(msg, sizeof msg,
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocol\":\"epp/1\",\"config\":%s}}",
		config_json);
	h_submit(h, msg);
	cJSON *r = h_send(h);
	CHECK(r && h_result(r) != NULL);
}

cJSON *h_send(harness *h)
{
	return h->send_pos < h->nsend ? h->sends[h->send_pos++] : NULL;
}
const char *h_send_text_last(harness *h)
{
	return h->send_pos ? h->send_text[h->send_pos - 1] : NULL;
}
h_http *h_http_next(harness *h)
{
	return h->http_pos < h->nhttp ? &h->https[h->http_pos++] : NULL;
}
uint32_t h_cancel_next(harness *h)
{
	return h->cancel_pos < h->ncancel ? h->cancels[h->cancel_pos++] : 0;
}
int h_pending(harness *h)
{
	return (h->nsend - h->send_pos) + (h->nhttp - h->http_pos) + (h->ncancel - h->cancel_pos);
}

void h_respond(harness *h, uint32_t op, int status, const char *headers, const char *body)
{
	e2bw_core_http_head(h->core, op, status, headers ? headers : "", headers ? strlen(headers) : 0,
		h->now);
	if (body)
		e2bw_core_http_body(h->core, op, (const uint8_t *)body, strlen(body), h->now);
	e2bw_core_http_end(h->core, op, h->now);
	h_drain(h);
}

const cJSON *h_result(const cJSON *msg)
{
	return msg ? cJSON_GetObjectItemCaseSensitive(msg, "result") : NULL;
}

int h_error_code(const cJSON *msg)
{
	const cJSON *e = msg ? cJSON_GetObjectItemCaseSensitive(msg, "error") : NULL;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
	return cJSON_IsNumber(c) ? c->valueint : 0;
}

const char *h_error_kind(const cJSON *msg)
{
	const cJSON *e = msg ? cJSON_GetObjectItemCaseSensitive(msg, "error") : NULL;
	const cJSON *k =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "data"), "kind");
	return cJSON_IsString(k) ? k->valuestring : NULL;
}

const char *h_error_message(const cJSON *msg)
{
	const cJSON *e = msg ? cJSON_GetObjectItemCaseSensitive(msg, "error") : NULL;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");
	return cJSON_IsString(m) ? m->valuestring : NULL;
}

const char *h_header(const h_http *req, const char *name)
{
	const cJSON *pair;
	cJSON_ArrayForEach(pair, req->headers) {
		const cJSON *k = cJSON_GetArrayItem(pair, 0), *v = cJSON_GetArrayItem(pair, 1);
		if (cJSON_IsString(k) && cJSON_IsString(v) && strcasecmp(k->valuestring, name) == 0)
			return v->valuestring;
	}
	return NULL;
}

double h_id(const cJSON *msg)
{
	const cJSON *id = msg ? cJSON_GetObjectItemCaseSensitive(msg, "id") : NULL;
	return cJSON_IsNumber(id) ? id->valuedouble : -1;
}
