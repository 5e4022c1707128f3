/* fuzz_common.h — shared by the fuzz targets: drain a core's actions and
 * check the invariants every output must keep. */
#ifndef E2BW_FUZZ_COMMON_H
#define E2BW_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "e2bw.h"

#define FUZZ_API_KEY "sk-fuzz-SECRET-4242"
#define FUZZ_ENVD_TOKEN "tok-fuzz-ENVD"

/* 1 when any 8 consecutive characters of secret appear in text[0..len). */
static int fuzz_leaks(const char *text, size_t len, const char *secret)
{
	size_t n = strlen(secret);
	for (size_t i = 0; i + 8 <= n; i++)
		for (size_t j = 0; j + 8 <= len; j++)
			if (memcmp(text + j, secret + i, 8) == 0)
				return 1;
	return 0;
}

typedef struct fuzz_state {
	uint32_t pending_ops[64];
	int nops;
	int answers;    /* responses with an id (not notifications) */
	int keyed;      /* initialized: the core knows the key and must redact it */
	int tokened;    /* the core learned FUZZ_ENVD_TOKEN and must redact it */
	int exits;      /* exec.exit notifications */
	int watch_ends; /* files.watch_end notifications */
	int ok;         /* the last answer was a result */
	int advance; /* when every request is served and input is left, time moves to the next deadline (a poll's timer) */
} fuzz_state;

/* 1 when p[0..n) is valid UTF-8 (RFC 3629). */
static int fuzz_utf8(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint8_t c = p[i];
		size_t len = c < 0x80            ? 1
			: c >= 0xC2 && c <= 0xDF ? 2
			: c >= 0xE0 && c <= 0xEF ? 3
			: c >= 0xF0 && c <= 0xF4 ? 4
						 : 0;
		if (!len || i + len > n)
			return 0;
		uint32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3F);
		}
		if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
			(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
			return 0;
		i += len;
	}
	return 1;
}

/* A detached string (e2bw.h): its member is "" in the message, the value is
 * valid UTF-8, ASCII exactly when flagged, and carries no secret either. */
static void fuzz_detached(e2bw_core *core, const cJSON *msg, uint32_t op, const fuzz_state *st)
{
	const uint8_t *value = e2bw_action_body(core);
	size_t n = e2bw_action_body_len(core);
	uint32_t member = op & ~(uint32_t)E2BW_DETACHED_ASCII;
	const cJSON *outer =
		cJSON_GetObjectItemCaseSensitive(msg, member == E2BW_DETACHED_DATA ? "params" : "result");
	const cJSON *item =
		cJSON_GetObjectItemCaseSensitive(outer, member == E2BW_DETACHED_DATA ? "data" : "content");
	if ((member != E2BW_DETACHED_DATA && member != E2BW_DETACHED_CONTENT) || !cJSON_IsString(item) ||
		item->valuestring[0])
		abort();
	if ((n && !value) || !fuzz_utf8(value, n))
		abort();
	int ascii = 1;
	for (size_t i = 0; i < n; i++)
		ascii &= value[i] < 0x80;
	if (!!(op & E2BW_DETACHED_ASCII) != ascii)
		abort();
	if ((st->keyed && fuzz_leaks((const char *)value, n, FUZZ_API_KEY)) ||
		(st->tokened && fuzz_leaks((const char *)value, n, FUZZ_ENVD_TOKEN)))
		abort();
}

/* Every SEND is one JSON-RPC 2.0 object on one line, marked as what it is
 * (e2bw_message: an error ends its call, exec.exit and files.watch_end end
 * theirs, nothing else does but a result), and no message of any
 * kind (answer, error, notification) carries 8 or more characters of the API
 * key or of the envd token — a detached string neither (fuzz_detached);
 * every HTTP head is valid JSON. Anything else is a bug. */
static void fuzz_drain(e2bw_core *core, fuzz_state *st)
{
	int kind;
	while ((kind = e2bw_core_next_action(core)) != E2BW_ACTION_NONE) {
		const char *text = e2bw_action_text(core);
		size_t len = e2bw_action_text_len(core);
		if (kind == E2BW_ACTION_SEND) {
			if (memchr(text, '\n', len))
				abort();
			cJSON *msg = cJSON_ParseWithLength(text, len);
			if (!msg)
				abort();
			cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
			if (!cJSON_IsString(v) || strcmp(v->valuestring, "2.0") != 0)
				abort();
			int has_result = cJSON_HasObjectItem(msg, "result"),
			    has_error = cJSON_HasObjectItem(msg, "error");
			if (has_result == has_error && !cJSON_HasObjectItem(msg, "method"))
				abort();
			if (has_result || has_error)
				st->answers++;
			if (has_result || has_error)
				st->ok = has_result;
			cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
			if (cJSON_IsString(method) && strcmp(method->valuestring, "exec.exit") == 0)
				st->exits++;
			if (cJSON_IsString(method) && strcmp(method->valuestring, "files.watch_end") == 0)
				st->watch_ends++;
			int mark = e2bw_action_message(core);
			int ends = cJSON_IsString(method) &&
				(strcmp(method->valuestring, "exec.exit") == 0 ||
					strcmp(method->valuestring, "files.watch_end") == 0);
			int want = has_result ? E2BW_MESSAGE_ANSWER | (mark & E2BW_MESSAGE_LAST)
				: has_error   ? E2BW_MESSAGE_ANSWER | E2BW_MESSAGE_LAST
					      : E2BW_MESSAGE_NOTIFICATION | (ends ? E2BW_MESSAGE_LAST : 0);
			if (mark != want)
				abort();
			if ((st->keyed && fuzz_leaks(text, len, FUZZ_API_KEY)) ||
				(st->tokened && fuzz_leaks(text, len, FUZZ_ENVD_TOKEN)))
				abort();
			uint32_t op = e2bw_action_op(core);
			if (op)
				fuzz_detached(core, msg, op, st);
			cJSON_Delete(msg);
		} else if (kind == E2BW_ACTION_HTTP) {
			cJSON *head = cJSON_ParseWithLength(text, len);
			if (!head)
				abort();
			cJSON_Delete(head);
			if (st->nops < 64)
				st->pending_ops[st->nops++] = e2bw_action_op(core);
		}
	}
}

static void fuzz_init(e2bw_core *core, fuzz_state *st)
{
	static const char init[] =
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"config\":"
		"{\"api_key\":\"" FUZZ_API_KEY
		"\",\"api_url\":\"http://api.fuzz\",\"sandbox_url\":\"http://envd.fuzz\",\"request_timeout\":5}}}";
	e2bw_core_submit(core, init, sizeof init - 1, 0);
	fuzz_drain(core, st);
	st->answers = 0;
	st->keyed = 1;
}

/* Teaches the core sbx1 (as sandbox.get would) so envd calls start at once;
 * from then on its envd token must be redacted like the key. */
static void learn_sandbox(e2bw_core *core, fuzz_state *st)
{
	static const char get[] =
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}}";
	static const char detail[] =
		"{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"envdAccessToken\":\"" FUZZ_ENVD_TOKEN "\"}";
	e2bw_core_submit(core, get, sizeof get - 1, 5);
	fuzz_drain(core, st);
	uint32_t op = st->pending_ops[st->nops - 1];
	e2bw_core_http_head(core, op, 200, "", 0, 5);
	e2bw_core_http_body(core, op, (const uint8_t *)detail, sizeof detail - 1, 5);
	e2bw_core_http_end(core, op, 5);
	fuzz_drain(core, st);
	st->answers = 0;
	st->nops = 0;
	st->tokened = 1;
}

typedef struct reader {
	const uint8_t *p;
	size_t left;
} reader;

static size_t take(reader *r, size_t want, const uint8_t **out)
{
	size_t n = want < r->left ? want : r->left;
	*out = r->p;
	r->p += n;
	r->left -= n;
	return n;
}

static unsigned byte(reader *r)
{
	const uint8_t *b;
	return take(r, 1, &b) ? b[0] : 0;
}

/* The input plays the backend: every request the core issued, in order,
 * while input lasts, gets a transport failure or a status, a header block
 * and a body in chunks, then an end or a cut. */
static void fuzz_play_backend(e2bw_core *core, fuzz_state *st, reader *r)
{
	double now = 10;
	for (int served = 0; r->left; served++) {
		if (served >= st->nops) { /* nothing waits on the backend: on a timer, maybe */
			double next = e2bw_core_next_deadline(core);
			if (!st->advance || next < 0 || st->nops >= 64)
				break;
			now = next > now ? next : now;
			e2bw_core_tick(core, now);
			fuzz_drain(core, st);
			if (served >= st->nops)
				break;
		}
		uint32_t op = st->pending_ops[served];
		unsigned mode = byte(r);
		if (mode < 16) {
			e2bw_core_http_fail(core, op, (int)(mode % 6), now);
			fuzz_drain(core, st);
			continue;
		}
		int status = (int)(byte(r) << 8 | byte(r)) % 700;
		const uint8_t *hdr;
		size_t hlen = take(r, byte(r), &hdr);
		e2bw_core_http_head(core, op, status, (const char *)hdr, hlen, now);
		fuzz_drain(core, st);
		unsigned chunks = byte(r) % 8;
		for (unsigned c = 0; c < chunks && r->left; c++) {
			const uint8_t *body;
			size_t blen = take(r, (size_t)byte(r) * 4 + 1, &body);
			e2bw_core_http_body(core, op, body, blen, now);
			fuzz_drain(core, st);
		}
		if (byte(r) & 1)
			e2bw_core_http_end(core, op, now);
		else
			e2bw_core_http_fail(core, op, E2BW_NET_RESET, now);
		fuzz_drain(core, st);
		now += 1;
	}
	/* time runs out: whatever is still waiting must be answered. A request
   * issued on the way (a lost create's lookup) has its own deadline, so
   * time moves on until nothing waits (a bounded number of times). */
	for (int i = 0; i < 8 && e2bw_core_next_deadline(core) >= 0; i++) {
		e2bw_core_tick(core, 1e12 * (i + 1));
		fuzz_drain(core, st);
	}
}

/* An initialized core; with the first input byte's top bit, long strings
 * leave detached (half the inputs). NULL when out of memory. */
static e2bw_core *fuzz_core(uint8_t first, fuzz_state *st)
{
	e2bw_core *core = e2bw_core_new();
	if (!core)
		return NULL;
	e2bw_core_set_detach(core, first >> 7);
	fuzz_init(core, st);
	return core;
}

/* Makes one call (with sbx1 known first when asked), the input playing the
 * backend; anything but exactly one answer aborts. */
static void fuzz_one_call(e2bw_core *core, fuzz_state *st, const char *call, int known_sandbox,
	const uint8_t *data, size_t size)
{
	st->nops = 0;
	if (known_sandbox)
		learn_sandbox(core, st);
	e2bw_core_submit(core, call, strlen(call), 10);
	fuzz_drain(core, st);
	reader r = {data, size};
	fuzz_play_backend(core, st, &r);
	if (st->answers != 1) {
		fprintf(stderr, "call answered %d times\n", st->answers);
		abort();
	}
}

#endif
