/* A request's head: its method, URI and headers. The routers decide on a
 * head alone (route, sandbox, key or token, body limit) both before the
 * body is read (the connection gate, http_gate.h) and when the whole
 * request is dispatched; http_head_of_request gives the same view of an
 * evhttp request.
 *
 * The gate parses heads from raw bytes itself (http_head_parse), strictly:
 * one Content-Length or "Transfer-Encoding: chunked" (never both), no
 * obsolete line folding, no NUL, a known method and an HTTP/1.x version;
 * anything else is a 400. It then hands evhttp a rebuilt head
 * (http_head_rebuild) whose only framing is a Content-Length it chose. */
#ifndef E2B_BACKEND_HTTP_HEAD_H
#define E2B_BACKEND_HTTP_HEAD_H

#include "http/http_framing.h"

#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdbool.h>
#include <stdint.h>

#define HTTP_HEAD_MAX_BYTES (32 * 1024) /* request line and headers together */

struct evbuffer;

struct http_head {
	enum evhttp_cmd_type method;
	const struct evhttp_uri *uri;
	struct evkeyvalq *headers;
};

void http_head_of_request(struct evhttp_request *req, struct http_head *out);
/* The path without query, never NULL. */
const char *http_head_path(const struct http_head *h);
/* The raw query string, or NULL. */
const char *http_head_query(const struct http_head *h);
const char *http_head_find(const struct http_head *h, const char *name);

/* A head read from raw bytes. */
struct http_head_parsed {
	struct http_head view;
	char *line; /* the request line as sent */
	struct evkeyvalq headers;
	struct evhttp_uri *uri;
	struct http_framing framing; /* of the body that follows */
	bool upgrade;                /* Connection: upgrade with an Upgrade header */
	bool expect_continue;        /* Expect: 100-continue */
};

/* Where the head at the front of src ends (the bytes after its empty line),
 * skipping empty lines before it: 0 when it is not all there yet, -1 when it
 * is already longer than HTTP_HEAD_MAX_BYTES. *skip gets the number of
 * leading empty-line bytes. */
long http_head_end(struct evbuffer *src, size_t *skip);
/* Parses the first len bytes of src (not drained). 0, or -1 for a head that
 * must be answered with 400. */
int http_head_parse(struct evbuffer *src, size_t len, struct http_head_parsed *out);
void http_head_clear(struct http_head_parsed *h);

/* The head again, for evhttp: the request line as sent, every header but
 * Content-Length, Transfer-Encoding and Expect, then Content-Length:
 * body_len (for a method that takes a body). */
int http_head_rebuild(const struct http_head_parsed *h, uint64_t body_len, struct evbuffer *out);

#endif
