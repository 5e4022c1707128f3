/* One evhttp server with the backend's limits, all requests going to one
 * dispatch function (the routing is ours, so every answer is JSON). */
#ifndef E2B_BACKEND_HTTP_SERVER_H
#define E2B_BACKEND_HTTP_SERVER_H

#include <stdint.h>

struct event_base;
struct evhttp;
struct evconnlistener;
struct evhttp_request;
struct http_conns;

#define HTTP_MAX_BODY_BYTES (1024 * 1024)  /* above: 413 from evhttp */
#define HTTP_MAX_HEADER_BYTES (32 * 1024)  /* above: evhttp rejects the request */
#define HTTP_IDLE_TIMEOUT_S 60             /* no byte read or written: dropped */

/* Its connections are tracked by conns (the cap and the whole-request
 * deadline, http_conns.h); dispatch must call http_conns_request_begins. */
struct evhttp *http_server_new(struct event_base *base, struct http_conns *conns,
	void (*dispatch)(struct evhttp_request *req, void *arg), void *arg);
/* The same with another body limit (the envd listener takes uploads and
 * enforces HTTP_MAX_BODY_BYTES itself on every other route). */
struct evhttp *http_server_new_limit(struct event_base *base, struct http_conns *conns,
	void (*dispatch)(struct evhttp_request *req, void *arg), void *arg, long long max_body);

/* Binds host:port (port 0 = ephemeral) and reports the real port; accept
 * errors on it back off through conns. listener_out (may be NULL) gets the
 * listener, to unwatch before the evhttp is freed. 0 on success, -1 with a
 * message on stderr. */
int http_server_bind(struct evhttp *http, struct http_conns *conns, const char *host,
	uint16_t port, uint16_t *bound_port, struct evconnlistener **listener_out);

#endif
