/* Connect protocol framing and errors over evhttp. */
#include "http/http_connect.h"

#include "http/http_reply.h"
#include "lib/text.h"

#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	int status;
} codes[] = {
	[CONNECT_CANCELED] = {"canceled", 499},
	[CONNECT_UNKNOWN] = {"unknown", 500},
	[CONNECT_INVALID_ARGUMENT] = {"invalid_argument", 400},
	[CONNECT_DEADLINE_EXCEEDED] = {"deadline_exceeded", 504},
	[CONNECT_NOT_FOUND] = {"not_found", 404},
	[CONNECT_ALREADY_EXISTS] = {"already_exists", 409},
	[CONNECT_PERMISSION_DENIED] = {"permission_denied", 403},
	[CONNECT_RESOURCE_EXHAUSTED] = {"resource_exhausted", 429},
	[CONNECT_FAILED_PRECONDITION] = {"failed_precondition", 400},
	[CONNECT_ABORTED] = {"aborted", 409},
	[CONNECT_OUT_OF_RANGE] = {"out_of_range", 400},
	[CONNECT_UNIMPLEMENTED] = {"unimplemented", 501},
	[CONNECT_INTERNAL] = {"internal", 500},
	[CONNECT_UNAVAILABLE] = {"unavailable", 503},
	[CONNECT_DATA_LOSS] = {"data_loss", 500},
	[CONNECT_UNAUTHENTICATED] = {"unauthenticated", 401},
};

const char *connect_code_name(enum connect_code code)
{
	if ((int)code < 1 || (size_t)code >= sizeof codes / sizeof codes[0])
		return "unknown";
	return codes[code].name;
}

int connect_code_http_status(enum connect_code code)
{
	if ((int)code < 1 || (size_t)code >= sizeof codes / sizeof codes[0])
		return 500;
	return codes[code].status;
}

/* The media type of the request without parameters, lowercased into out. */
static void media_type(struct evhttp_request *req, char *out, size_t cap)
{
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
	size_t n = 0;
	if (ct) {
		while (*ct == ' ' || *ct == '\t')
			ct++;
		for (; ct[n] && ct[n] != ';' && ct[n] != ' ' && ct[n] != '\t' && n + 1 < cap; n++)
			out[n] = (char)(ct[n] >= 'A' && ct[n] <= 'Z' ? ct[n] + 32 : ct[n]);
	}
	out[n] = '\0';
}

static int reply_connect_json_error(struct evhttp_request *req, int status, enum connect_code code,
	const char *message)
{
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddStringToObject(body, "code", connect_code_name(code));
		cJSON_AddStringToObject(body, "message", message);
	}
	return reply_json(req, status, body);
}

int connect_check_request(struct evhttp_request *req, enum connect_kind kind)
{
	char type[64];
	media_type(req, type, sizeof type);
	const char *want = kind == CONNECT_UNARY ? "application/json" : "application/connect+json";
	if (strcmp(type, want) != 0) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Accept-Post", want);
		char message[160];
		snprintf(message, sizeof message,
			"unsupported content type \"%.60s\": this endpoint speaks only %s", type, want);
		return reply_connect_json_error(req, 415, CONNECT_UNIMPLEMENTED, message);
	}
	if (kind == CONNECT_UNARY) {
		const char *enc =
			evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Encoding");
		if (enc && *enc && strcasecmp(enc, "identity") != 0)
			return reply_connect_json_error(req, 501, CONNECT_UNIMPLEMENTED,
				"request compression is not supported");
	}
	return 0;
}

static cJSON *parse_message(const char *text, size_t len, struct err *err)
{
	/* protojson refuses invalid UTF-8; a NUL would be cut short by cJSON
	 * (and no program, argument or variable can hold one). */
	if (!text_utf8_valid(text, len)) {
		err_set(err, CONNECT_INVALID_ARGUMENT, "unmarshal message: invalid UTF-8 in string");
		return NULL;
	}
	if (text_json_has_nul_escape(text, len)) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"unmarshal message: strings must not contain NUL (\\u0000)");
		return NULL;
	}
	const char *end = NULL;
	cJSON *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
	bool trailing = false;
	if (root && end)
		for (const char *p = end; p < text + len; p++)
			if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
				trailing = true;
	if (!root || trailing || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		err_set(err, CONNECT_INVALID_ARGUMENT, "unmarshal message: the request is not a JSON object");
		return NULL;
	}
	return root;
}

cJSON *connect_read_unary(struct evhttp_request *req, struct err *err)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	if (len == 0)
		return cJSON_CreateObject(); /* an empty body is the empty message */
	const char *text = (const char *)evbuffer_pullup(in, -1);
	if (!text) {
		err_set(err, CONNECT_INTERNAL, "out of memory");
		return NULL;
	}
	return parse_message(text, len, err);
}

cJSON *connect_read_stream_request(struct evhttp_request *req, struct err *err)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	const uint8_t *p = len ? evbuffer_pullup(in, -1) : NULL;
	if (len < CONNECT_ENVELOPE_HEADER || !p) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"protocol error: the request has no enveloped message");
		return NULL;
	}
	uint32_t n = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
	if (p[0] & CONNECT_FLAG_COMPRESSED) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"protocol error: received a compressed message without Connect-Content-Encoding");
		return NULL;
	}
	if (p[0] != 0 || (size_t)n != len - CONNECT_ENVELOPE_HEADER) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"protocol error: expected exactly one message envelope of %zu bytes",
			len - CONNECT_ENVELOPE_HEADER);
		return NULL;
	}
	if (n == 0)
		return cJSON_CreateObject();
	return parse_message((const char *)p + CONNECT_ENVELOPE_HEADER, n, err);
}

int connect_reply_unary(struct evhttp_request *req, cJSON *msg)
{
	return reply_json(req, 200, msg);
}

int connect_reply_unary_error(struct evhttp_request *req, const struct err *err)
{
	return reply_connect_json_error(req, connect_code_http_status(err->status), err->status, err->msg);
}

void connect_stream_headers(struct evhttp_request *req)
{
	reply_add_cors(req);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/connect+json");
}

int connect_envelope_add(struct evbuffer *buf, uint8_t flags, const char *json, size_t len)
{
	uint8_t head[CONNECT_ENVELOPE_HEADER] = {flags, (uint8_t)(len >> 24), (uint8_t)(len >> 16),
		(uint8_t)(len >> 8), (uint8_t)len};
	if (evbuffer_add(buf, head, sizeof head) != 0 || evbuffer_add(buf, json, len) != 0)
		return -1;
	return 0;
}

int connect_envelope_add_json(struct evbuffer *buf, uint8_t flags, const cJSON *msg)
{
	char *text = reply_json_print(msg);
	if (!text)
		return -1;
	int rc = connect_envelope_add(buf, flags, text, strlen(text));
	free(text);
	return rc;
}

int connect_end_stream_add(struct evbuffer *buf, const struct err *err)
{
	if (!err)
		return connect_envelope_add(buf, CONNECT_FLAG_END_STREAM, "{}", 2);
	cJSON *root = cJSON_CreateObject();
	cJSON *e = root ? cJSON_AddObjectToObject(root, "error") : NULL;
	int rc = -1;
	if (e && cJSON_AddStringToObject(e, "code", connect_code_name(err->status)) &&
		cJSON_AddStringToObject(e, "message", err->msg))
		rc = connect_envelope_add_json(buf, CONNECT_FLAG_END_STREAM, root);
	cJSON_Delete(root);
	return rc;
}

int connect_reply_stream_error(struct evhttp_request *req, const struct err *err)
{
	struct evbuffer *buf = evbuffer_new();
	if (!buf || connect_end_stream_add(buf, err) != 0) {
		if (buf)
			evbuffer_free(buf);
		return reply_empty(req, 500);
	}
	connect_stream_headers(req);
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
	return 200;
}

long long connect_keepalive_ms(const char *header)
{
	if (!header || !*header)
		return CONNECT_KEEPALIVE_DEFAULT_MS;
	char *end = NULL;
	double s = strtod(header, &end);
	while (end && (*end == ' ' || *end == '\t'))
		end++;
	/* envd takes whole seconds (strconv.Atoi); fractions are our extension,
	 * so tests can watch keepalives without waiting. */
	if (!end || *end || !isfinite(s) || s <= 0)
		return CONNECT_KEEPALIVE_DEFAULT_MS;
	if (s > 86400.0)
		s = 86400.0;
	long long ms = (long long)(s * 1000.0);
	return ms < CONNECT_KEEPALIVE_MIN_MS ? CONNECT_KEEPALIVE_MIN_MS : ms;
}
