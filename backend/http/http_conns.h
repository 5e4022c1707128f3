/* Every open HTTP connection of every listener, so that no client can hold
 * the backend hostage:
 *   - the connection gate (http_gate.h) on each one: a request is routed
 *     and authenticated on its head, before its body is read;
 *   - a cap on open connections: at the cap, the oldest connection that has
 *     no request in progress is closed to make room (or, when every one is
 *     busy, accepting pauses for a moment). The control plane keeps a
 *     reserve of its own: envd's listeners (the shared one and each
 *     sandbox's) may hold at most the cap minus that reserve, so no number
 *     of streams or proxied connections can lock the API out;
 *   - requests in progress per sandbox (streams, proxied connections,
 *     uploads, downloads) are capped: one more is a 429 on its head; so are
 *     the bodies being read into memory for a sandbox (RPCs, SendInput's
 *     input): one that would take them past HTTP_CONNS_BODY_BYTES_PER_SANDBOX
 *     is a 429 on its head, and its body is dropped as it comes;
 *   - a deadline for a whole request (headers and body, idle time before it
 *     included): evhttp's own timeout restarts on every byte, so a client
 *     sending one byte a second would never be dropped;
 *   - accept() errors (EMFILE and friends) pause the listeners briefly and
 *     are logged once per episode, instead of spinning.
 * A request in progress (a Start or Connect stream, say) has no deadline.
 *
 * libevent 2.1 has no connection cap and no hook for a new connection, so
 * this makes the bufferevents evhttp uses (evhttp_set_bevcb) and owns every
 * connection's close callback: other code must call http_conn_set_closecb,
 * never evhttp_connection_set_closecb (which would silently take the
 * tracker's place). One tracker per process. */
#ifndef E2B_BACKEND_HTTP_CONNS_H
#define E2B_BACKEND_HTTP_CONNS_H

#include "http/http_gate.h"

#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evconnlistener;

#define HTTP_CONNS_DEFAULT_MAX 1024
#define HTTP_CONNS_FD_RESERVE 64 /* descriptors kept for pipes, files, the state dir, lingering closes */
#define HTTP_CONNS_DEFAULT_PER_SANDBOX 256
#define HTTP_CONNS_BODY_BYTES_PER_SANDBOX (16 * 1024 * 1024)

/* Which share of the cap a listener's connections use. */
enum http_pool {
	HTTP_POOL_API,
	HTTP_POOL_ENVD
};

struct http_conns_limits {
	size_t max_connections; /* 0: the default, bounded by the descriptor limit */
	long request_timeout_s;
	size_t per_sandbox; /* requests in progress for one sandbox; 0: the default */
};

struct http_conns;

struct http_conns *http_conns_new(struct event_base *base, const struct http_conns_limits *limits);
/* After every evhttp using it has been freed. */
void http_conns_free(struct http_conns *conns);
size_t http_conns_max(const struct http_conns *conns);
/* Connections only the control plane may use: min(64, cap / 4). */
size_t http_conns_api_reserve(const struct http_conns *conns);

/* Tracks and gates every connection http accepts, in pool. verdict routes
 * each request's head (NULL: every request may send a body of up to
 * 1 MiB). */
int http_conns_attach(struct http_conns *conns, struct evhttp *http, enum http_pool pool,
	http_verdict_fn verdict, void *arg);
/* After http is freed. */
void http_conns_detach(struct http_conns *conns, struct evhttp *http);
/* Pauses and logs instead of spinning when this listener's accept() fails. */
void http_conns_watch_listener(struct http_conns *conns, struct evconnlistener *listener,
	enum http_pool pool);
/* Before the listener is freed (a sandbox's own envd listener at kill). */
void http_conns_unwatch_listener(struct http_conns *conns, struct evconnlistener *listener);

/* Called by a dispatcher for each request: from now until its answer is
 * sent, its connection is busy (no deadline, never closed to make room).
 * NULL, or the refusal the gate decided (413 body too large, 429 too many
 * requests for the sandbox), which the dispatcher sends instead of routing. */
const struct http_verdict *http_conns_request_begins(struct evhttp_request *req);

/* The gate of req's connection (a STREAM body, a RAW take-over); NULL when
 * the connection is not tracked. */
struct http_gate *http_conns_gate(struct evhttp_request *req);

/* req's handler ends its connection itself when the sandbox goes (process
 * and watch streams): http_conns_close_sandbox leaves it. */
void http_conns_ends_itself(struct evhttp_request *req);
/* Closes every connection with a request in progress for sandbox id (a
 * download, an upload, a proxied exchange), as E2B's proxy drops them. */
void http_conns_close_sandbox(struct http_conns *conns, const char *id);

/* evhttp_connection_set_closecb for code that needs to know when a client
 * goes away; the tracker keeps its own callback. cb NULL removes it. */
void http_conn_set_closecb(struct evhttp_connection *evcon, void (*cb)(struct evhttp_connection *, void *),
	void *arg);

/* For a close callback set with http_conn_set_closecb: after a network
 * failure evhttp has let go of req and it is ours to free; when the whole
 * server is freed, evhttp frees it itself. Frees req in the first case.
 * Call it after everything that still reads req. */
void http_conn_gone_free_request(struct evhttp_request *req);

/* Any file that includes this one cannot call the libevent function by
 * mistake (http_conns_list.c calls it as (evhttp_connection_set_closecb)(...)). */
#define evhttp_connection_set_closecb(...) use_http_conn_set_closecb_instead

#endif
