/* http/ — HTTP on libevent's evhttp, as every surface of the backend uses
 * it.
 * Owns: the servers and their limits (http_server.c), the connection
 * tracker with its cap, deadlines and close callbacks (http_conns.c),
 * requests (http_request.c) and requests parked over off-loop work
 * (http_parked.c), replies in E2B's shapes with CORS
 * (http_reply.c), JSON bodies and their typed fields (http_body.c,
 * http_field.c), path patterns (http_route.c), the Connect protocol's
 * framing (http_connect.c) and protobuf-JSON readers (http_protojson.c).
 * May call: lib/ only. Every handler calls down into it; it reaches a
 * handler only through the dispatch callback main.c gives a server.
 *
 * This file: one evhttp server with the backend's limits, all requests
 * going to one dispatch function (the routing is ours, so every answer is
 * JSON). */
#ifndef E2B_BACKEND_HTTP_SERVER_H
#define E2B_BACKEND_HTTP_SERVER_H

#include "http/http_conns.h"

#include <stdint.h>

struct event_base;
struct evhttp;
struct evconnlistener;
struct evhttp_request;

#define HTTP_MAX_BODY_BYTES (1024 * 1024) /* a body the gate reads whole: above, 413 */
/* The most a router's READ verdict may raise that to (a template's COPY
 * files, once their link's token checked out on the head). */
#define HTTP_MAX_READ_BODY_BYTES (256LL * 1024 * 1024)
#define HTTP_MAX_HEADER_BYTES HTTP_HEAD_MAX_BYTES
#define HTTP_IDLE_TIMEOUT_S 60 /* no byte read or written: dropped */

/* Its connections are tracked and gated by conns (the cap, the whole-request
 * deadline, the head's verdict, http_conns.h) in pool; verdict decides on
 * each head before its body is read (NULL: bodies of up to 1 MiB); dispatch
 * gets whole requests and must call http_conns_request_begins first. */
struct evhttp *http_server_new(struct event_base *base, struct http_conns *conns, enum http_pool pool,
	void (*dispatch)(struct evhttp_request *req, void *arg), http_verdict_fn verdict, void *arg);
/* evhttp_free, and the tracker forgets the server. */
void http_server_free(struct http_conns *conns, struct evhttp *http);

/* Binds host:port (port 0 = ephemeral) and reports the real port; accept
 * errors on it back off through conns. listener_out (may be NULL) gets the
 * listener, to unwatch before the evhttp is freed. 0 on success, -1 with a
 * message on stderr. */
int http_server_bind(struct evhttp *http, struct http_conns *conns, enum http_pool pool, const char *host,
	uint16_t port, uint16_t *bound_port, struct evconnlistener **listener_out);

/* "http://127.0.0.1:8080" for a listening host and port, brackets added
 * for IPv6. */
void http_server_url(const char *host, uint16_t port, char *out, int cap);

#endif
