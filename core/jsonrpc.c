#include "jsonrpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

static int depth_ok(const cJSON *item, int depth)
{
	if (depth > E2BW_JSON_MAX_DEPTH)
		return 0;
	for (const cJSON *c = item->child; c; c = c->next)
		if ((cJSON_IsObject(c) || cJSON_IsArray(c)) && !depth_ok(c, depth + 1))
			return 0;
	return 1;
}

static int only_whitespace(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return 0;
	return 1;
}

/* What cJSON cannot tell about a message: the exact text of the top-level
 * "id" value (ids are echoed byte for byte: 9007199254740993, 1e3, -0 and
 * "x\u0000one" come back as sent), and the first string that holds U+0000
 * (cJSON cuts strings there; the path of its member is kept for the error). */
#define RAW_MAX_DEPTH 300 /* deeper is refused by cJSON's nesting limit anyway */
#define RAW_KEYS 6        /* member names kept for the error's field path */
#define SPAN_MIN 4096     /* a plain string this long is copied whole, not by cJSON's parser */
#define SPAN_DEPTH 8      /* how deep such a string may sit (member indexes kept) */
typedef struct raw_info {
	const char *id;
	size_t id_len;
	int nul;
	char nul_field[128];
	const char *span; /* the longest plain (escape-free) string value, or NULL */
	size_t span_len;
	int span_depth;
	int span_at[SPAN_DEPTH]; /* its member index at each depth, from the root down */
} raw_info;

static void nul_field(raw_info *out, const char *const *keys, const size_t *lens, int depth)
{
	size_t n = 0;
	out->nul = 1;
	for (int d = 2; d <= depth && d < RAW_KEYS; d++) { /* from params' members down */
		if (!keys[d])
			continue;
		size_t k = lens[d] < 40 ? lens[d] : 40;
		if (n + k + 2 >= sizeof out->nul_field)
			break;
		if (n)
			out->nul_field[n++] = '.';
		memcpy(out->nul_field + n, keys[d], k);
		n += k;
	}
	if (!n)
		memcpy(out->nul_field, "params", 7), n = 6;
	out->nul_field[n] = '\0';
}

static void raw_scan(const char *t, size_t len, raw_info *out)
{
	char open[RAW_MAX_DEPTH];
	const char *keys[RAW_KEYS] = {0};
	size_t lens[RAW_KEYS] = {0};
	int at[SPAN_DEPTH] = {0};
	int depth = 0, expect_key = 0, id_next = 0;
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < len; i++) {
		char c = t[i];
		if (c == '"') {
			size_t start = i + 1;
			int nul = 0;
			/* most strings hold no escape: two memchr passes instead of a byte loop */
			const char *q = memchr(t + start, '"', len - start);
			size_t stop = q ? (size_t)(q - t) : len;
			if (!memchr(t + start, '\\', stop - start)) {
				i = stop;
				if (!expect_key && stop - start >= SPAN_MIN && stop - start > out->span_len &&
					depth > 0 && depth <= SPAN_DEPTH) {
					out->span = t + start, out->span_len = stop - start,
					out->span_depth = depth;
					memcpy(out->span_at, at, sizeof at);
				}
			} else {
				for (i = start; i < len && t[i] != '"'; i++)
					if (t[i] == '\\') {
						if (len - i > 5 && memcmp(t + i + 1, "u0000", 5) == 0)
							nul = 1;
						i++;
					}
				if (i > len)
					i = len; /* a backslash as the last byte stepped past the end */
			}
			if (expect_key) {
				if (depth < RAW_KEYS)
					keys[depth] = t + start, lens[depth] = i - start;
				id_next = depth == 1 && !out->id && i - start == 2 &&
					memcmp(t + start, "id", 2) == 0;
				expect_key = 0;
			} else if (id_next) {
				out->id = t + start - 1, out->id_len = i - start + 2;
				id_next = nul = 0;
			}
			if (nul && !out->nul)
				nul_field(out, keys, lens, depth);
			continue;
		}
		if (c == '{' || c == '[') {
			if (depth < RAW_MAX_DEPTH)
				open[depth] = c;
			if (depth < SPAN_DEPTH)
				at[depth] = 0;
			depth++;
			expect_key = c == '{';
			id_next = 0;
			if (depth < RAW_KEYS)
				keys[depth] = NULL;
		} else if (c == '}' || c == ']') {
			if (--depth < 0)
				return; /* not JSON (cJSON refuses it); the scan now runs before the parse */
		} else if (c == ',') {
			if (depth > 0 && depth <= SPAN_DEPTH)
				at[depth - 1]++;
			expect_key = depth > 0 && depth <= RAW_MAX_DEPTH && open[depth - 1] == '{';
		} else if (id_next && c != ':' &&
			(unsigned char)c > 0x20) { /* cJSON skips every byte <= 0x20 */
			size_t start = i;
			while (i < len && (unsigned char)t[i] > 0x20 && t[i] != ',' && t[i] != '}' &&
				t[i] != ']')
				i++;
			out->id = t + start, out->id_len = i - start;
			id_next = 0;
			i--;
		}
	}
}

/* JSON's number grammar (cJSON also takes "+1", "01", ".5": not echoable). */
static int json_number(const char *p, size_t n)
{
	const char *end = p + n;
	if (p < end && *p == '-')
		p++;
	if (p == end)
		return 0;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	else
		return 0;
	if (p < end && *p == '.') {
		if (++p == end || *p < '0' || *p > '9')
			return 0;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p == end || *p < '0' || *p > '9')
			return 0;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	}
	return p == end;
}

/* The id as a raw item holding its exact text. */
static cJSON *raw_id(const raw_info *raw)
{
	char *text = malloc(raw->id_len + 1);
	if (!text)
		return NULL;
	memcpy(text, raw->id, raw->id_len);
	text[raw->id_len] = '\0';
	cJSON *item = cJSON_CreateRaw(text);
	free(text);
	return item;
}

/* cJSON parses strings a byte at a time and copies them again; content of
 * many MiB (files.write) costs most of a call that way. The longest plain
 * string is cut out ("" in its place), the rest parsed, and the string put
 * back with one memcpy: the same tree, whatever member it is. */
static cJSON *parse_spliced(const char *text, size_t len, const raw_info *raw)
{
	size_t head = (size_t)(raw->span - text), tail = len - head - raw->span_len;
	char *small = malloc(head + tail + 1), *big = cJSON_malloc(raw->span_len + 1);
	cJSON *root = NULL;
	if (small && big) {
		memcpy(small, text, head);
		memcpy(small + head, raw->span + raw->span_len, tail);
		small[head + tail] = '\0';
		const char *end = NULL;
		root = cJSON_ParseWithLengthOpts(small, head + tail, &end, 0);
		cJSON *item = root && end && only_whitespace(end, small + head + tail) ? root : NULL;
		for (int d = 0; item && d < raw->span_depth; d++) {
			item = item->child;
			for (int i = 0; item && i < raw->span_at[d]; i++)
				item = item->next;
		}
		if (cJSON_IsString(item) && item->valuestring[0] == '\0') {
			memcpy(big, raw->span, raw->span_len);
			big[raw->span_len] = '\0';
			cJSON_free(item->valuestring);
			item->valuestring = big;
			big = NULL;
		} else { /* not where the scan saw it (not JSON): the ordinary parse decides */
			cJSON_Delete(root);
			root = NULL;
		}
	}
	free(small);
	cJSON_free(big);
	return root;
}

/* A string param holds U+0000: cJSON ends strings there, so it is refused. */
static cJSON *nul_error(const char *field)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
		"Invalid params: '%s' holds a NUL character (\\u0000), which cannot be passed on", field);
	return e2bw_error_set_str(e, "field", field);
}

e2bw_rpc_parse_result e2bw_rpc_parse(const char *text, size_t len, e2bw_rpc_request *req, cJSON **error)
{
	memset(req, 0, sizeof *req);
	*error = NULL;
	raw_info raw;
	raw_scan(text, len, &raw);
	const char *end = text + len;
	req->root = raw.span ? parse_spliced(text, len, &raw) : NULL;
	if (!req->root) {
		end = NULL;
		req->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	}
	if (!req->root || !end || !only_whitespace(end, text + len)) {
		cJSON_Delete(req->root);
		req->root = NULL;
		*error = e2bw_error_new(E2BW_ERR_PARSE_ERROR, "Parse error: the message is not valid JSON");
		return E2BW_RPC_INVALID;
	}
	cJSON *root = req->root;
	if (cJSON_IsArray(root)) {
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
			"Invalid Request: batches are not supported by EPP/1; send one object per line");
		return E2BW_RPC_INVALID;
	}
	if (!cJSON_IsObject(root)) {
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
			"Invalid Request: a message must be a JSON object");
		return E2BW_RPC_INVALID;
	}
	if (!depth_ok(root, 1)) {
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
			"Invalid Request: nested deeper than %d levels", E2BW_JSON_MAX_DEPTH);
		return E2BW_RPC_INVALID;
	}

	const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
	int id_ok = !id || cJSON_IsNull(id) || ((cJSON_IsString(id) || cJSON_IsNumber(id)) && raw.id);
	if (id_ok && cJSON_IsNumber(id) && !json_number(raw.id, raw.id_len))
		id_ok = 0;
	/* cJSON lets raw control bytes through in strings; JSON does not, and
   * they would break the answer's line: such an id is echoed as cJSON read it */
	for (size_t i = 0; id_ok && raw.id && i < raw.id_len; i++)
		if ((unsigned char)raw.id[i] < 0x20)
			raw.id = NULL;
	if (id_ok && !raw.id) {
		req->id = id;
	} else if (id_ok && (cJSON_IsString(id) || cJSON_IsNumber(id))) {
		req->id = req->id_raw = raw_id(&raw);
		if (!req->id) {
			*error = e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory");
			return E2BW_RPC_INVALID;
		}
	} else if (id_ok) {
		req->id = id;
	}

	const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "jsonrpc");
	if (!cJSON_IsString(version) || strcmp(version->valuestring, "2.0") != 0) {
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
			"Invalid Request: \"jsonrpc\" must be \"2.0\"");
		return E2BW_RPC_INVALID;
	}
	if (!id_ok) {
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
			"Invalid Request: \"id\" must be a string, a number or null");
		return E2BW_RPC_INVALID;
	}
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
	if (!method) {
		/* A response (result/error) addressed to us: EPP hosts send none, ignore. */
		if (cJSON_HasObjectItem(root, "result") || cJSON_HasObjectItem(root, "error"))
			return E2BW_RPC_IGNORED;
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST, "Invalid Request: \"method\" is missing");
		return E2BW_RPC_INVALID;
	}
	if (!cJSON_IsString(method) || method->valuestring[0] == '\0') {
		*error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
			"Invalid Request: \"method\" must be a non-empty string");
		return E2BW_RPC_INVALID;
	}
	req->method = method->valuestring;

	cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
	if (params && !cJSON_IsNull(params) && !cJSON_IsObject(params)) {
		*error = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: \"params\" must be an object (EPP/1 uses named parameters)");
		if (*error)
			e2bw_error_set_str(*error, "field", "params");
		return id ? E2BW_RPC_INVALID : E2BW_RPC_NOTIFICATION;
	}
	req->params = cJSON_IsObject(params) ? params : NULL;
	if (raw.nul) { /* cJSON would hand on a string cut at the NUL */
		*error = nul_error(raw.nul_field);
		return id ? E2BW_RPC_INVALID : E2BW_RPC_NOTIFICATION;
	}
	return id ? E2BW_RPC_REQUEST : E2BW_RPC_NOTIFICATION;
}

cJSON *e2bw_rpc_attach(e2bw_rpc_request *req, const char *member, size_t member_len, const char *value,
	size_t value_len)
{
	char key[64];
	cJSON *item = NULL, *e;
	if (member_len < sizeof key && !memchr(member, 0, member_len)) {
		memcpy(key, member, member_len);
		key[member_len] = '\0';
		item = cJSON_GetObjectItemCaseSensitive(req->params, key);
	}
	if (!cJSON_IsString(item)) {
		e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: a detached value needs its string member in params");
		return e2bw_error_set_str(e, "field", "params");
	}
	if (memchr(value, 0, value_len))
		return nul_error(key); /* as in JSON text: cJSON strings end at a NUL */
	char *copy = cJSON_malloc(value_len + 1);
	if (!copy)
		return e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory");
	memcpy(copy, value, value_len);
	copy[value_len] = '\0';
	cJSON_free(item->valuestring);
	item->valuestring = copy;
	return NULL;
}

void e2bw_rpc_request_free(e2bw_rpc_request *req)
{
	cJSON_Delete(req->root);
	cJSON_Delete(req->id_raw);
	memset(req, 0, sizeof *req);
}

/* Ids arrive as raw items holding their exact text (e2bw_rpc_parse). */
static cJSON *id_item(const cJSON *id)
{
	return id ? cJSON_Duplicate(id, 0) : cJSON_CreateNull();
}

/* {"jsonrpc":"2.0","id":<id>,<key>:<value>} — value ownership passes in. */
static char *envelope_text(const cJSON *id, const char *key, cJSON *value)
{
	cJSON *msg = cJSON_CreateObject();
	cJSON *id_copy = id_item(id);
	char *text = NULL;
	if (msg && id_copy && value && cJSON_AddStringToObject(msg, "jsonrpc", "2.0")) {
		int ok = cJSON_AddItemToObject(msg, "id", id_copy);
		if (!ok)
			cJSON_Delete(id_copy);
		id_copy = NULL;
		ok = ok && cJSON_AddItemToObject(msg, key, value);
		if (ok)
			value = NULL;
		text = ok ? cJSON_PrintUnformatted(msg) : NULL; /* never an answer without its id or body */
	}
	cJSON_Delete(id_copy);
	cJSON_Delete(value);
	cJSON_Delete(msg);
	return text;
}

char *e2bw_rpc_result_text(const cJSON *id, cJSON *result)
{
	return envelope_text(id, "result", result); /* no result (out of memory): no text */
}

char *e2bw_rpc_error_text(const cJSON *id, cJSON *error)
{
	return envelope_text(id, "error", error);
}

char *e2bw_rpc_notification_text(const char *method, cJSON *params)
{
	cJSON *msg = cJSON_CreateObject();
	char *text = NULL;
	if (msg && params && cJSON_AddStringToObject(msg, "jsonrpc", "2.0") &&
		cJSON_AddStringToObject(msg, "method", method) &&
		cJSON_AddItemToObject(msg, "params", params)) {
		params = NULL;
		text = cJSON_PrintUnformatted(msg);
	}
	cJSON_Delete(params);
	cJSON_Delete(msg);
	return text;
}

char *e2bw_rpc_id_text(const cJSON *id)
{
	cJSON *item = id_item(id);
	char *text = item ? cJSON_PrintUnformatted(item) : NULL;
	cJSON_Delete(item);
	return text;
}
