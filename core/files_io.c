/* files_io.c — file content over envd's /files (docs/e2b-protocol-notes.md,
 * "Files").
 *
 * files.read: GET /files with a Range for offset/length. The answer is one EPP
 * message written straight from the body as it arrives (base64 or JSON text),
 * so the content is held once, never as bytes and text both. A file (or range)
 * over E2BW_FILES_MAX_READ is refused before its body is read.
 *
 * files.write: POST /files, application/octet-stream when envd >= 0.5.7,
 * multipart/form-data before, then chmod/chown (files_chmod.c) when mode or
 * owner is given, then Stat for the Entry it answers with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "files.h"
#include "files_chmod.h"
#include "files_entry.h"
#include "files_io.h"
#include "json_text.h"
#include "jsonrpc.h"
#include "multipart.h"
#include "params.h"
#include "url.h"

#define USER_AGENT "e2b-wasm/" E2BW_VERSION
#define ERROR_BODY_MAX (64u * 1024u)
#define UNKNOWN ((unsigned long long)-1)

/* GET|POST {envd}/files?path=<p>[&username=<u>] with envd's routing headers.
 * A given body (malloc'd) passes to the request: no copy of a 12 MiB upload. */
static e2bw_http_op *files_request(e2bw_core *core, e2bw_call *call, const char *method,
	const char *const *extra, const uint8_t *body, size_t body_len, uint8_t *given)
{
	const char *id = e2bw_call_param_str(call, "sandbox_id");
	const char *path = e2bw_call_param_str(call, "path");
	const e2bw_sandbox_info *info = e2bw_sandbox_lookup(core, id);
	e2bw_buf url = {0}, what = {0};
	const char *user = e2bw_files_user(call);
	int rc = e2bw_envd_base_url(core, id, &url) || e2bw_buf_append_str(&url, "/files?path=") ||
		e2bw_url_encode_str(&url, path) ||
		(user && (e2bw_buf_append_str(&url, "&username=") || e2bw_url_encode_str(&url, user)));
	rc |= e2bw_buf_append_str(&what, method) || e2bw_buf_append_str(&what, " /files");
	const char *headers[24];
	int h = 0;
	headers[h++] = "User-Agent", headers[h++] = USER_AGENT;
	headers[h++] = "E2b-Sandbox-Id", headers[h++] = id;
	headers[h++] = "E2b-Sandbox-Port", headers[h++] = E2BW_ENVD_PORT;
	if (info && info->token)
		headers[h++] = "X-Access-Token", headers[h++] = info->token;
	for (; extra && extra[0] && h < 22; extra += 2)
		headers[h++] = extra[0], headers[h++] = extra[1];
	headers[h] = NULL;
	e2bw_http_op *op = NULL;
	if (!rc) {
		e2bw_http_spec spec = {method, url.data, what.data, headers, body, body_len,
			call->request_timeout_ms, given};
		op = e2bw_http_start(core, &spec);
	} else {
		free(given);
	}
	e2bw_buf_free(&url);
	e2bw_buf_free(&what);
	if (!op)
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory while building a request"));
	else
		e2bw_call_own(op, call);
	return op;
}

static cJSON *too_large(const char *path, unsigned long long bytes)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_TOO_LARGE,
		"Path '%.300s': %llu bytes do not fit in one EPP message: files.read answers at most %u bytes "
		"(limits.max_message_bytes %u as base64); read it in pieces with offset/length, or fetch it "
		"from a files.url link",
		path, bytes, (unsigned)E2BW_FILES_MAX_READ, (unsigned)E2BW_MAX_MESSAGE_BYTES);
	e2bw_error_set_num(e, "limit", E2BW_FILES_MAX_READ);
	return e2bw_error_set_str(e, "path", path);
}

/* ===== files.read ========================================================== */

typedef struct read_state {
	e2bw_buf msg;  /* the answer, written as the body arrives */
	e2bw_buf head; /* detached (e2bw.h): the answer; msg holds only the content */
	int detached;
	int base64;
	int head_seen;        /* the status and headers were looked at */
	int ok;               /* 2xx: body is content */
	int encoded;          /* Content-Encoding: lengths are not raw */
	uint8_t b64_carry[3]; /* bytes waiting for a full base64 group */
	size_t b64_len;
	e2bw_utf8_carry u8;          /* text mode: a character cut between chunks */
	int u8_need;                 /* text mode: continuation bytes still due */
	unsigned char u8_lo, u8_hi;  /* allowed range of the next continuation byte */
	unsigned long long skip;     /* bytes to drop: envd ignored the Range */
	unsigned long long want;     /* bytes still wanted, or UNKNOWN: all */
	unsigned long long got;      /* content bytes written */
	unsigned long long expect;   /* Content-Length, or UNKNOWN */
	unsigned long long received; /* body bytes received */
	unsigned long long total;    /* the file's size, or UNKNOWN */
	unsigned long long offset;
} read_state;

static void read_state_free(void *p)
{
	read_state *st = p;
	e2bw_buf_free(&st->msg);
	e2bw_buf_free(&st->head);
	free(st);
}

static unsigned long long parse_ull(const char *s, const char **end)
{
	unsigned long long n = 0;
	const char *p = s;
	while (*p >= '0' && *p <= '9' && n < 1000000000000000000ull)
		n = n * 10 + (unsigned)(*p++ - '0');
	if (end)
		*end = p;
	return p == s ? UNKNOWN : n;
}

/* "bytes a-b/total" or "bytes * /total": the total. */
static unsigned long long content_range_total(const char *v)
{
	const char *slash = strchr(v, '/');
	return slash ? parse_ull(slash + 1, NULL) : UNKNOWN;
}

/* Validates UTF-8 across chunk cuts (the text goes out as a JSON string).
 * Returns -1 at the first invalid byte. */
static int utf8_check(read_state *st, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (st->u8_need) {
			if (c < st->u8_lo || c > st->u8_hi)
				return -1;
			st->u8_lo = 0x80, st->u8_hi = 0xBF;
			st->u8_need--;
			continue;
		}
		if (c < 0x80)
			continue;
		st->u8_lo = 0x80, st->u8_hi = 0xBF;
		if (c >= 0xC2 && c <= 0xDF)
			st->u8_need = 1;
		else if (c == 0xE0)
			st->u8_need = 2, st->u8_lo = 0xA0;
		else if (c == 0xED)
			st->u8_need = 2, st->u8_hi = 0x9F;
		else if (c >= 0xE1 && c <= 0xEF)
			st->u8_need = 2;
		else if (c == 0xF0)
			st->u8_need = 3, st->u8_lo = 0x90;
		else if (c >= 0xF1 && c <= 0xF3)
			st->u8_need = 3;
		else if (c == 0xF4)
			st->u8_need = 3, st->u8_hi = 0x8F;
		else
			return -1;
	}
	return 0;
}

static int append_content(read_state *st, const uint8_t *p, size_t n)
{
	if (!st->base64) {
		if (utf8_check(st, p, n) != 0)
			return -2;
		return st->detached ? e2bw_buf_append(&st->msg, p, n)
				    : e2bw_json_text(&st->msg, &st->u8, p, n, 0);
	}
	int rc = 0;
	while (n && st->b64_len) { /* finish the carried group first */
		st->b64_carry[st->b64_len++] = *p++;
		n--;
		if (st->b64_len == 3) {
			rc |= e2bw_base64_encode(&st->msg, st->b64_carry, 3);
			st->b64_len = 0;
		}
	}
	size_t whole = n - n % 3;
	if (whole)
		rc |= e2bw_base64_encode(&st->msg, p, whole);
	for (size_t i = whole; i < n; i++)
		st->b64_carry[st->b64_len++] = p[i];
	return rc;
}

static void read_fail(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_call *call = op->call;
	e2bw_call_fail(core, call, error); /* cancels and frees op with its state */
}

/* Looks at the head once, at the first body bytes or at the end. Returns 0,
 * or -1 after failing the call. */
static int read_head(e2bw_core *core, e2bw_http_op *op, read_state *st)
{
	if (st->head_seen)
		return 0;
	st->head_seen = 1;
	e2bw_call *call = op->call;
	const char *path = e2bw_call_param_str(call, "path");
	char v[128];
	st->ok = op->status == 200 || op->status == 206;
	if (!st->ok)
		return 0;
	st->encoded = e2bw_http_header(op, "content-encoding", v, sizeof v) && strcmp(v, "identity") != 0;
	unsigned long long length =
		e2bw_http_header(op, "content-length", v, sizeof v) ? parse_ull(v, NULL) : UNKNOWN;
	if (!st->encoded)
		st->expect = length;
	if (op->status == 206) {
		if (e2bw_http_header(op, "content-range", v, sizeof v))
			st->total = content_range_total(v);
	} else {
		st->total = st->encoded ? UNKNOWN : length;
		st->skip = st->offset; /* the whole file came: drop what precedes offset */
	}
	/* The content this answer will carry, when the head tells. */
	unsigned long long content = UNKNOWN;
	if (st->total != UNKNOWN)
		content = st->total > st->offset ? st->total - st->offset : 0;
	else if (op->status == 206 && st->expect != UNKNOWN)
		content = st->expect;
	if (content != UNKNOWN && st->want != UNKNOWN && st->want < content)
		content = st->want;
	if (content != UNKNOWN && content > E2BW_FILES_MAX_READ) {
		read_fail(core, op, too_large(path, content));
		return -1;
	}
	size_t reserve = content == UNKNOWN ? 0 : (size_t)(st->base64 ? (content + 2) / 3 * 4 : content);
	if (e2bw_buf_reserve(&st->msg, reserve + 256) != 0) {
		read_fail(core, op,
			e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory for %llu bytes of '%.300s'", content,
				path));
		return -1;
	}
	return 0;
}

static void read_data(e2bw_core *core, e2bw_http_op *op, const uint8_t *data, size_t len)
{
	read_state *st = op->owner;
	if (read_head(core, op, st) != 0)
		return;
	if (!st->ok) { /* an error answer: keep it for the message */
		size_t room = ERROR_BODY_MAX > op->body.len ? ERROR_BODY_MAX - op->body.len : 0;
		e2bw_buf_append(&op->body, data, len < room ? len : room);
		return;
	}
	st->received += len;
	if (st->skip) {
		size_t drop = st->skip < len ? (size_t)st->skip : len;
		data += drop;
		len -= drop;
		st->skip -= drop;
	}
	if (st->want != UNKNOWN && len > st->want)
		len = (size_t)st->want;
	if (!len)
		return;
	const char *path = e2bw_call_param_str(op->call, "path");
	if (st->got + len > E2BW_FILES_MAX_READ) {
		read_fail(core, op, too_large(path, st->got + len));
		return;
	}
	int rc = append_content(st, data, len);
	if (rc == -2) {
		cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: '%.300s' is not UTF-8 text (at byte %llu): read it with encoding \"base64\"",
			path, st->offset + st->got);
		read_fail(core, op, e2bw_error_set_str(e, "field", "encoding"));
		return;
	}
	if (rc != 0 || st->msg.len > E2BW_MAX_MESSAGE_BYTES - 1024) {
		read_fail(core, op,
			rc ? e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory reading '%.300s'", path)
			   : too_large(path, st->got + len));
		return;
	}
	st->got += len;
	if (st->want != UNKNOWN)
		st->want -= len;
}

/* The response is over: nothing to cancel, so the op is dropped first. */
static void read_end_fail(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_call *call = op->call;
	e2bw_http_op_finish(core, op);
	e2bw_call_fail(core, call, error);
}

static void read_done(e2bw_core *core, e2bw_http_op *op)
{
	read_state *st = op->owner;
	e2bw_call *call = op->call;
	const char *path = e2bw_call_param_str(call, "path");
	if (read_head(core, op, st) != 0)
		return;
	if (op->status == 416) { /* offset at or past the end: no bytes */
		char v[128];
		if (e2bw_http_header(op, "content-range", v, sizeof v))
			st->total = content_range_total(v);
	} else if (!st->ok) {
		read_end_fail(core, op, e2bw_files_error(op, e2bw_call_param_str(call, "sandbox_id"), path));
		return;
	} else if (st->expect != UNKNOWN && st->received != st->expect) {
		read_end_fail(core, op,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"envd's answer for '%.300s' was cut: %llu of %llu bytes arrived", path,
				st->received, st->expect));
		return;
	}
	int rc = 0;
	if (st->base64 && st->b64_len)
		rc = e2bw_base64_encode(&st->msg, st->b64_carry, st->b64_len);
	if (!st->base64 && st->u8_need) {
		cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: '%.300s' ends inside a UTF-8 character: read it with encoding \"base64\"",
			path);
		read_end_fail(core, op, e2bw_error_set_str(e, "field", "encoding"));
		return;
	}
	char tail[160];
	e2bw_buf *m = st->detached ? &st->head : &st->msg;
	int n = snprintf(tail, sizeof tail, "\",\"size\":%llu", st->got);
	rc |= e2bw_buf_append(m, tail, (size_t)n);
	if (st->total != UNKNOWN) {
		n = snprintf(tail, sizeof tail, ",\"total_size\":%llu", st->total);
		rc |= e2bw_buf_append(m, tail, (size_t)n);
	}
	rc |= e2bw_buf_append_str(m, "}}") || e2bw_buf_append(&st->msg, "", 0); /* content never NULL */
	if (rc) {
		read_end_fail(core, op,
			e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory reading '%.300s'", path));
		return;
	}
	size_t len, content_len;
	char *text = e2bw_buf_take(m, &len);
	int detached = st->detached;
	char *content = detached ? e2bw_buf_take(&st->msg, &content_len) : NULL;
	e2bw_http_op_finish(core, op); /* frees st */
	int answer = E2BW_MESSAGE_ANSWER | E2BW_MESSAGE_LAST;
	rc = detached
		? e2bw_emit_detached(core, answer, text, len, E2BW_DETACHED_CONTENT, content, content_len)
		: e2bw_emit_text_len(core, answer, text, len);
	if (rc)
		e2bw_emit_answer(core, call->id, NULL, 1); /* out of memory: the reserved answer */
	e2bw_call_answered(core, call);
}

static void read_go(e2bw_core *core, e2bw_call *call)
{
	const char *path = e2bw_call_param_str(call, "path");
	const cJSON *off = cJSON_GetObjectItemCaseSensitive(call->params, "offset");
	const cJSON *len = cJSON_GetObjectItemCaseSensitive(call->params, "length");
	read_state *st = calloc(1, sizeof *st);
	char *id = e2bw_rpc_id_text(call->id);
	if (!st || !id) {
		free(st);
		free(id);
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	st->base64 = e2bw_param_base64(call->params);
	st->offset = cJSON_IsNumber(off) ? (unsigned long long)off->valuedouble : 0;
	st->want = cJSON_IsNumber(len) ? (unsigned long long)len->valuedouble : UNKNOWN;
	st->expect = st->total = UNKNOWN;
	if (st->want != UNKNOWN && st->want > E2BW_FILES_MAX_READ) {
		free(st);
		free(id);
		e2bw_call_fail(core, call, too_large(path, (unsigned long long)len->valuedouble));
		return;
	}
	/* {"jsonrpc":"2.0","id":ID,"result":{"path":P,"encoding":E,"offset":O,"content":"…","size":N,"total_size":T}} */
	char mid[96];
	snprintf(mid, sizeof mid, ",\"encoding\":\"%s\",\"offset\":%llu,\"content\":\"",
		st->base64 ? "base64" : "utf8", st->offset);
	st->detached = core->detach_min != 0;
	e2bw_buf *m = st->detached ? &st->head : &st->msg;
	int rc = e2bw_buf_append_str(m, "{\"jsonrpc\":\"2.0\",\"id\":") || e2bw_buf_append_str(m, id) ||
		e2bw_buf_append_str(m, ",\"result\":{\"path\":") || e2bw_json_quoted(m, path, strlen(path)) ||
		e2bw_buf_append_str(m, mid);
	free(id);
	char range[64];
	const char *headers[6] = {"Accept-Encoding", "identity", NULL, NULL, NULL, NULL};
	if (st->offset || st->want != UNKNOWN) {
		if (st->want == UNKNOWN)
			snprintf(range, sizeof range, "bytes=%llu-", st->offset);
		else if (st->want == 0)
			snprintf(range, sizeof range, "bytes=%llu-%llu", st->offset,
				st->offset); /* answered empty below */
		else
			snprintf(range, sizeof range, "bytes=%llu-%llu", st->offset,
				st->offset + st->want - 1);
		headers[2] = "Range";
		headers[3] = range;
	}
	if (rc) {
		read_state_free(st);
		e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	e2bw_http_op *op = files_request(core, call, "GET", headers, NULL, 0, NULL);
	if (!op) {
		read_state_free(st);
		return;
	}
	op->owner = st;
	op->owner_free = read_state_free;
	op->on_data = read_data;
	op->on_done = read_done;
}

void e2bw_files_read(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, read_go);
}

/* ===== files.write ========================================================= */

static void write_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *path = e2bw_call_param_str(call, "path");
	if (op->status != 200) {
		cJSON *e = e2bw_files_error(op, e2bw_call_param_str(call, "sandbox_id"), path);
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, e);
		return;
	}
	/* 200 is a JSON array with one entry per written file (docs/e2b-protocol-notes.md, "Files"). */
	cJSON *answer = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	int confirmed = cJSON_IsArray(answer) && cJSON_GetArraySize(answer) > 0;
	cJSON_Delete(answer);
	e2bw_http_op_finish(core, op);
	if (!confirmed) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"envd did not confirm writing '%.300s' (no entry in its answer)", path));
		return;
	}
	e2bw_files_chmod_then_stat(core, call);
}

/* A multipart boundary that does not occur in the content. */
static int occurs(const uint8_t *data, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++)
		if (data[i] == (uint8_t)needle[0] && memcmp(data + i, needle, n) == 0)
			return 1;
	return 0;
}

static void write_go(e2bw_core *core, e2bw_call *call)
{
	const char *path = e2bw_call_param_str(call, "path");
	int base64 = e2bw_param_base64(call->params);
	const cJSON *content = cJSON_GetObjectItemCaseSensitive(call->params, "content");
	e2bw_buf bytes = {0}, body = {0};
	const uint8_t *data = (const uint8_t *)content->valuestring;
	size_t len = strlen(content->valuestring);
	if (base64) {
		int rc = e2bw_base64_decode(&bytes, content->valuestring, len);
		if (rc != 0) {
			e2bw_buf_free(&bytes);
			cJSON *e = rc == -2
				? e2bw_error_set_str(e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
							     "Invalid params: 'content' is not base64"),
					  "field", "content")
				: e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory");
			e2bw_call_fail(core, call, e);
			return;
		}
		data = (const uint8_t *)bytes.data;
		len = bytes.len;
	}
	e2bw_buf *given = base64 ? &bytes : NULL;
	const char *headers[4] = {"Content-Type", "application/octet-stream", NULL, NULL};
	char type[96], boundary[48];
	if (!e2bw_envd_at_least(core, e2bw_call_param_str(call, "sandbox_id"), 0, 5, 7)) {
		/* envd before 0.5.7 takes only multipart (as the SDK falls back) */
		unsigned n = 0;
		do
			snprintf(boundary, sizeof boundary, "e2bw-%08x-%u", core->next_op_id, n++);
		while (occurs(data, len, boundary));
		snprintf(type, sizeof type, "multipart/form-data; boundary=%s", boundary);
		headers[1] = type;
		if (e2bw_multipart_file(&body, boundary, path, data, len) != 0) {
			e2bw_buf_free(&bytes);
			e2bw_call_fail(core, call, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
			return;
		}
		data = (const uint8_t *)body.data;
		len = body.len;
		given = &body;
	}
	e2bw_http_op *op =
		files_request(core, call, "POST", headers, data, len, given ? (uint8_t *)given->data : NULL);
	if (given)
		memset(given, 0, sizeof *given); /* the request owns it now */
	e2bw_buf_free(&bytes);
	e2bw_buf_free(&body);
	if (op)
		op->on_done = write_done;
}

void e2bw_files_write(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, write_go);
}
