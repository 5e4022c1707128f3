/* Writing responses (http_reply.h). */
#include "http/http_reply.h"

#include "lib/text.h"

#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void reply_add_cors(struct evhttp_request *req)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	evhttp_add_header(out, "Access-Control-Allow-Origin", "*");
	evhttp_add_header(out, "Access-Control-Expose-Headers", "X-Next-Token, X-Total-Running");
}

char *reply_json_print(const cJSON *value)
{
	char *text = value ? cJSON_PrintUnformatted(value) : NULL;
	if (!text)
		return NULL;
	size_t len = strlen(text);
	/* cJSON copies string bytes as they are; a path or header byte that is
	 * not UTF-8 must not reach a client raw. Only string contents can hold
	 * bytes >= 0x80, so replacing them keeps the JSON well-formed. */
	char *out = text_utf8_valid(text, len) ? strdup(text) : text_utf8_replace_invalid(text, len, &len);
	cJSON_free(text);
	return out;
}

int reply_json_text(struct evhttp_request *req, int status, struct evbuffer *text)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	reply_add_cors(req);
	evhttp_add_header(out, "Content-Type", "application/json");
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		/* What GET would send, without the body: evhttp 2.1 would write
		 * the body after a HEAD answer and corrupt a kept-alive connection. */
		char length[24];
		snprintf(length, sizeof length, "%zu", evbuffer_get_length(text));
		evhttp_add_header(out, "Content-Length", length);
		evbuffer_drain(text, evbuffer_get_length(text));
	}
	evhttp_send_reply(req, status, NULL, text);
	return status;
}

int reply_json(struct evhttp_request *req, int status, cJSON *body)
{
	char *text = reply_json_print(body);
	cJSON_Delete(body);
	struct evbuffer *buf = text ? evbuffer_new() : NULL;
	if (!buf || evbuffer_add(buf, text, strlen(text)) != 0) {
		free(text);
		if (buf)
			evbuffer_free(buf);
		return reply_empty(req, 500);
	}
	reply_json_text(req, status, buf);
	evbuffer_free(buf);
	free(text);
	return status;
}

int reply_error(struct evhttp_request *req, int status, const char *message)
{
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddNumberToObject(body, "code", status);
		cJSON_AddStringToObject(body, "message", message);
	}
	return reply_json(req, status, body);
}

int reply_errorf(struct evhttp_request *req, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *message = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!message)
		return reply_error(req, status, "error");
	va_start(ap, fmt);
	vsnprintf(message, (size_t)n + 1, fmt, ap);
	va_end(ap);
	reply_error(req, status, message);
	free(message);
	return status;
}

int reply_empty(struct evhttp_request *req, int status)
{
	reply_add_cors(req);
	evhttp_send_reply(req, status, NULL, NULL);
	return status;
}

int reply_preflight(struct evhttp_request *req)
{
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	const char *asked =
		evhttp_find_header(evhttp_request_get_input_headers(req), "Access-Control-Request-Headers");
	evhttp_add_header(out, "Access-Control-Allow-Methods",
		"GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD");
	/* "*" does not cover Authorization in browsers, so echo what was asked
	 * (evhttp refuses header values containing CR/LF). */
	if (!asked || !*asked || evhttp_add_header(out, "Access-Control-Allow-Headers", asked) != 0)
		evhttp_add_header(out, "Access-Control-Allow-Headers", "*");
	evhttp_add_header(out, "Access-Control-Max-Age", "86400");
	return reply_empty(req, 204);
}
