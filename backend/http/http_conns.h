/* Every open HTTP connection of both listeners, so that no client can hold
 * the backend hostage:
 *   - a cap on open connections: at the cap, the oldest connection that has
 *     no request in progress is closed to make room (or, when every one is
 *     busy, accepting pauses for a moment);
 *   - a deadline for a whole request (headers and body, idle time before it
 *     included): evhttp's own timeout restarts on every byte, so a client
 *     sending one byte a second would never be dropped;
 *   - accept() errors (EMFILE and friends) pause the listeners briefly and
 *     are logged once per episode, instead of spinning.
 * A request in progress (a Start or Connect stream, say) has no deadline.
 *
 * libevent 2.1 has no connection cap and no hook for a new connection, so
 * this watches the bufferevents it hands to evhttp (evhttp_set_bevcb) and
 * owns every connection's close callback: other code must call
 * http_conn_set_closecb, never evhttp_connection_set_closecb (which would
 * silently take the tracker's place). One tracker per process. */
#ifndef E2B_BACKEND_HTTP_CONNS_H
#define E2B_BACKEND_HTTP_CONNS_H

#include <event2/http.h>
#include <stddef.h>

struct event_base;
struct evconnlistener;

#define HTTP_CONNS_DEFAULT_MAX 1024
#define HTTP_CONNS_FD_RESERVE 64 /* descriptors kept for pipes, files, the state dir */

struct http_conns;

/* max_connections 0 means the default, bounded by the descriptor limit. */
struct http_conns *http_conns_new(struct event_base *base, size_t max_connections,
	long request_timeout_s);
/* After every evhttp using it has been freed. */
void http_conns_free(struct http_conns *conns);
size_t http_conns_max(const struct http_conns *conns);

/* Tracks every connection http accepts. */
void http_conns_attach(struct http_conns *conns, struct evhttp *http);
/* Pauses and logs instead of spinning when this listener's accept() fails. */
void http_conns_watch_listener(struct http_conns *conns, struct evconnlistener *listener);
/* Before the listener is freed (a sandbox's own envd listener at kill). */
void http_conns_unwatch_listener(struct http_conns *conns, struct evconnlistener *listener);

/* Called by a dispatcher for each request: from now until its answer is
 * sent, its connection is busy (no deadline, never closed to make room). */
void http_conns_request_begins(struct evhttp_request *req);

/* evhttp_connection_set_closecb for code that needs to know when a client
 * goes away; the tracker keeps its own callback. cb NULL removes it. */
void http_conn_set_closecb(struct evhttp_connection *evcon,
	void (*cb)(struct evhttp_connection *, void *), void *arg);

/* For a close callback set with http_conn_set_closecb: after a network
 * failure evhttp has let go of req and it is ours to free; when the whole
 * server is freed, evhttp frees it itself. Frees req in the first case.
 * Call it after everything that still reads req. */
void http_conn_gone_free_request(struct evhttp_request *req);

/* Any file that includes this one cannot call the libevent function by
 * mistake (http_conns.c calls it as (evhttp_connection_set_closecb)(...)). */
#define evhttp_connection_set_closecb(...) use_http_conn_set_closecb_instead

#endif
