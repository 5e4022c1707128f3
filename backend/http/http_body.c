/* Reading a JSON request body (http_body.h). */
#include "http/http_body.h"

#include "lib/text.h"

#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void body_error_set(struct err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(err, 400, fmt, ap);
	va_end(ap);
	err_wrap(err, "Error when parsing request");
}

static bool only_whitespace(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return false;
	return true;
}

cJSON *body_parse_object(struct evhttp_request *req, enum body_need need, struct err *err)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	/* evhttp_set_max_body_size already capped len (413 above it). */
	const char *text = len ? (const char *)evbuffer_pullup(in, -1) : "";
	if (len && !text) {
		err_set(err, 500, "out of memory");
		return NULL;
	}
	if (only_whitespace(text, text + len)) {
		if (need == BODY_OPTIONAL)
			return cJSON_CreateObject();
		body_error_set(err, "request body is required");
		return NULL;
	}
	if (text_json_has_nul_escape(text, len)) {
		body_error_set(err, "strings must not contain NUL (\\u0000)");
		return NULL;
	}
	/* Go's encoding/json turns invalid UTF-8 in strings into U+FFFD; so do
	 * we, before cJSON keeps the raw bytes and we echo them. */
	char *fixed = NULL;
	if (!text_utf8_valid(text, len)) {
		fixed = text_utf8_replace_invalid(text, len, &len);
		if (!fixed) {
			err_set(err, 500, "out of memory");
			return NULL;
		}
		text = fixed;
	}
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	bool trailing = !root || !end || !only_whitespace(end, text + len);
	free(fixed);
	if (trailing) {
		cJSON_Delete(root);
		body_error_set(err, "request body is not valid JSON");
		return NULL;
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		body_error_set(err, "request body must be a JSON object");
		return NULL;
	}
	return root;
}
