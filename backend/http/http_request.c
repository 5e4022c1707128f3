/* What a request says about itself: method, path, Basic user; and its log
 * line (http_request.h). */
#include "http/http_request.h"

#include "lib/base64.h"

#include <event2/http.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int request_basic_user(struct evhttp_request *req, char *out, size_t cap)
{
	out[0] = '\0';
	const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	if (!h || strncasecmp(h, "Basic ", 6) != 0)
		return 0;
	uint8_t *raw;
	size_t len;
	if (base64_decode(h + 6, strlen(h + 6), &raw, &len) != 0)
		return 0;
	uint8_t *colon = memchr(raw, ':', len);
	int found = 0;
	if (colon) {
		/* A NUL cannot be in an account name; C strings would cut it. */
		found = memchr(raw, '\0', (size_t)(colon - raw)) ? -1 : 1;
		if (found > 0)
			snprintf(out, cap, "%.*s", (int)(colon - raw), (const char *)raw);
	}
	free(raw);
	return found;
}

const char *request_method_name(const struct evhttp_request *req)
{
	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
		return "GET";
	case EVHTTP_REQ_POST:
		return "POST";
	case EVHTTP_REQ_HEAD:
		return "HEAD";
	case EVHTTP_REQ_PUT:
		return "PUT";
	case EVHTTP_REQ_DELETE:
		return "DELETE";
	case EVHTTP_REQ_OPTIONS:
		return "OPTIONS";
	case EVHTTP_REQ_TRACE:
		return "TRACE";
	case EVHTTP_REQ_CONNECT:
		return "CONNECT";
	case EVHTTP_REQ_PATCH:
		return "PATCH";
	}
	return "?";
}

const char *request_path(const struct evhttp_request *req)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	return path ? path : "";
}

void request_log(const char *server, struct evhttp_request *req, int status)
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

void request_path_segment(const struct evhttp_request *req, int k, char *out, size_t cap)
{
	const char *p = request_path(req);
	out[0] = '\0';
	for (int i = 0; i <= k && *p == '/'; i++) {
		p++;
		size_t n = strcspn(p, "/");
		if (i == k && n < cap) {
			memcpy(out, p, n);
			out[n] = '\0';
		}
		p += n;
	}
}
