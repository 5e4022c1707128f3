/* Writing responses and the request log. */
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

char *json_print_utf8(const cJSON *value)
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
	char *text = json_print_utf8(body);
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
	const char *asked = evhttp_find_header(evhttp_request_get_input_headers(req),
		"Access-Control-Request-Headers");
	evhttp_add_header(out, "Access-Control-Allow-Methods",
		"GET, POST, PUT, PATCH, DELETE, OPTIONS, HEAD");
	/* "*" does not cover Authorization in browsers, so echo what was asked
	 * (evhttp refuses header values containing CR/LF). */
	if (!asked || !*asked || evhttp_add_header(out, "Access-Control-Allow-Headers", asked) != 0)
		evhttp_add_header(out, "Access-Control-Allow-Headers", "*");
	evhttp_add_header(out, "Access-Control-Max-Age", "86400");
	return reply_empty(req, 204);
}

const char *request_method_name(const struct evhttp_request *req)
{
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET: return "GET";
	case EVHTTP_REQ_POST: return "POST";
	case EVHTTP_REQ_HEAD: return "HEAD";
	case EVHTTP_REQ_PUT: return "PUT";
	case EVHTTP_REQ_DELETE: return "DELETE";
	case EVHTTP_REQ_OPTIONS: return "OPTIONS";
	case EVHTTP_REQ_TRACE: return "TRACE";
	case EVHTTP_REQ_CONNECT: return "CONNECT";
	case EVHTTP_REQ_PATCH: return "PATCH";
	}
	return "?";
}

const char *request_path(const struct evhttp_request *req)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	return path ? path : "";
}

void log_request(const char *server, struct evhttp_request *req, int status)
{
	/* The path is attacker-chosen: keep the line short and printable so it
	 * cannot forge extra log lines or terminal escapes. */
	char path[201];
	const char *src = request_path(req);
	size_t n = 0;
	for (; src[n] && n < sizeof path - 1; n++)
		path[n] = src[n] >= 0x20 && src[n] < 0x7f ? src[n] : '?';
	path[n] = '\0';
	fprintf(stderr, "%s %s %s %d\n", server, request_method_name(req), path, status);
}
