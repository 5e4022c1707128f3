/* Tracking open HTTP connections: the gate on each, the cap with the
 * control plane's reserve, requests per sandbox, the request deadline and
 * the accept back-off (see http_conns.h). The list of connections, and the
 * records this file shares with it, are http_conns_list.h's. */
#include "http/http_conns.h"
#include "http/http_conns_list.h"
#include "http/http_linger.h"

#include "lib/clock.h"
#include "lib/mem_trim.h"

#include <errno.h>
#include <inttypes.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define ACCEPT_PAUSE_MS 250
#define ACCEPT_LOG_INTERVAL_MS 10000
#define API_RESERVE_MAX 64
#define LARGE_BODY (64 * 1024) /* a body whose freeing is worth a trim (lib/mem_trim.h) */

static struct http_conns *tracker; /* the one per process */

static size_t default_max(void)
{
	struct rlimit rl;
	size_t max = HTTP_CONNS_DEFAULT_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		size_t budget = rl.rlim_cur > HTTP_CONNS_FD_RESERVE + 8
			? (size_t)rl.rlim_cur - HTTP_CONNS_FD_RESERVE
			: 8;
		if (budget < max)
			max = budget;
	}
	return max;
}

/* --- accepting --------------------------------------------------------------- */

static void set_listeners(struct http_conns *c, int pool, bool on)
{
	for (size_t i = 0; i < c->listener_count; i++) {
		if (pool >= 0 && c->listeners[i].pool != (enum http_pool)pool)
			continue;
		if (on)
			evconnlistener_enable(c->listeners[i].l);
		else
			evconnlistener_disable(c->listeners[i].l);
	}
	for (int p = 0; p < 2; p++)
		if (pool < 0 || p == pool)
			c->paused[p] = !on;
}

/* Stops accepting for a moment (pool -1: every listener); the kernel keeps
 * new clients in the backlog. */
static void pause_accepting(struct http_conns *c, int pool)
{
	if (pool >= 0 ? c->paused[pool] : c->paused[0] && c->paused[1])
		return;
	set_listeners(c, pool, false);
	struct timeval tv = {.tv_sec = 0, .tv_usec = ACCEPT_PAUSE_MS * 1000};
	evtimer_add(c->resume, &tv);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	set_listeners(arg, -1, true);
}

/* --- one connection ---------------------------------------------------------- */

/* Requests in progress for sandbox id, and the body bytes being received. */
static size_t sandbox_requests(struct http_conns *c, const char *id, uint64_t *body_bytes)
{
	size_t n = 0;
	*body_bytes = 0;
	for (struct http_conn *e = c->oldest; e; e = e->next)
		if (e->counted && strcmp(e->sandbox, id) == 0) {
			n++;
			*body_bytes += e->body_bytes;
		}
	return n;
}

/* What a READ body may hold in memory until its request is dispatched: its
 * length (the gate checked it: digits), or the cap when it comes in chunks. */
static uint64_t read_body_bytes(const struct http_head *head, const struct http_verdict *v)
{
	if (v->kind != HTTP_VERDICT_READ)
		return 0;
	const char *length = http_head_find(head, "Content-Length");
	if (!length)
		return http_head_find(head, "Transfer-Encoding") ? v->max_body : 0;
	uint64_t n = strtoull(length, NULL, 10);
	return n < v->max_body ? n : v->max_body;
}

/* The gate's verdict hook: the server's router, then the per-sandbox caps. */
static void conn_verdict(const struct http_head *head, struct http_verdict *v, void *arg)
{
	struct http_conn *e = arg;
	if (e->server->verdict)
		e->server->verdict(head, v, e->server->verdict_arg);
	e->counted = false;
	e->body_bytes = 0;
	if (!v->sandbox[0] || v->kind == HTTP_VERDICT_REFUSE)
		return;
	uint64_t receiving, body = read_body_bytes(head, v);
	size_t n = sandbox_requests(e->tracker, v->sandbox, &receiving);
	if (n >= e->tracker->per_sandbox || receiving + body > HTTP_CONNS_BODY_BYTES_PER_SANDBOX) {
		v->kind = HTTP_VERDICT_REFUSE; /* a body is then read and dropped, never kept */
		v->status = 429;
		if (n >= e->tracker->per_sandbox)
			snprintf(v->message, sizeof v->message,
				"too many requests in progress for sandbox "
				"%.64s (at most %zu)",
				v->sandbox, e->tracker->per_sandbox);
		else
			snprintf(v->message, sizeof v->message,
				"too many request bodies being received for "
				"sandbox %.64s (%" PRIu64 " bytes; at most %d MiB)",
				v->sandbox, receiving, HTTP_CONNS_BODY_BYTES_PER_SANDBOX >> 20);
		return;
	}
	snprintf(e->sandbox, sizeof e->sandbox, "%s", v->sandbox);
	e->counted = true;
	e->body_bytes = body;
}

static void conn_close(void *arg)
{
	struct http_conn *e = arg;
	if (!e->evcon)
		return;
	/* The answer evhttp queued may not have reached the socket yet (the
	 * write event comes later): write it now, end our side with a FIN
	 * after it, and let the socket linger (http_linger.h): a close while
	 * the client still sends would reset the connection, and the reset can
	 * destroy the answer before the client reads it. */
	evutil_socket_t fd = bufferevent_getfd(e->bev);
	struct evbuffer *out = bufferevent_get_output(e->bev);
	struct http_linger *linger = e->tracker->linger;
	if (fd >= 0) {
		for (int i = 0; i < 64 && evbuffer_get_length(out) > 0; i++)
			if (evbuffer_write(out, fd) <= 0)
				break;
		shutdown(fd, SHUT_WR);
		evutil_socket_t copy = linger ? dup(fd) : -1; /* evhttp closes fd */
		if (copy >= 0)
			http_linger_take(linger, copy);
	}
	evhttp_connection_free(e->evcon); /* on_close frees e */
}

static void on_adopt(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	http_conns_list_adopt(arg);
}

/* evhttp's hook for each accepted connection, before it exists: the
 * bufferevent it will use, with the gate already on it. */
static struct bufferevent *on_new_connection(struct event_base *base, void *arg)
{
	struct http_conns_server *s = arg;
	struct http_conns *c = s->tracker;
	http_conns_list_adopt(c);
	/* The options evhttp would use itself. */
	struct bufferevent *bev = bufferevent_socket_new(base, -1, 0);
	struct http_conn *e = bev ? calloc(1, sizeof *e) : NULL;
	if (e && c->pending_count == c->pending_cap) {
		size_t cap = c->pending_cap ? c->pending_cap * 2 : 16;
		struct http_conn **grown = realloc(c->pending, cap * sizeof *grown);
		if (grown) {
			c->pending = grown;
			c->pending_cap = cap;
		}
	}
	if (!e || c->pending_count == c->pending_cap) {
		free(e);
		return bev; /* out of memory: served untracked (NULL would not refuse it) */
	}
	e->tracker = c;
	e->server = s;
	e->bev = bev;
	e->deadline = evtimer_new(c->base, http_conns_list_on_deadline, e);
	struct http_gate_hooks hooks = {.verdict = conn_verdict, .close = conn_close, .arg = e};
	e->gate = e->deadline ? http_gate_new(base, bev, &hooks) : NULL;
	bufferevent_incref(bev);
	c->pending[c->pending_count++] = e;
	c->count++;
	if (s->pool == HTTP_POOL_ENVD)
		c->envd_count++;
	event_active(c->adopt, EV_TIMEOUT, 1);
	/* The control plane may use every connection; envd all but the reserve. */
	bool full = s->pool == HTTP_POOL_ENVD ? c->envd_count >= c->max - c->api_reserve : c->count >= c->max;
	if (full && !http_conns_list_close_oldest_idle(c, s->pool == HTTP_POOL_ENVD ? HTTP_POOL_ENVD : -1))
		pause_accepting(c, s->pool); /* every connection is busy */
	return bev;
}

static void on_accept_error(struct evconnlistener *listener, void *arg)
{
	(void)listener;
	(void)arg; /* evhttp's, not ours */
	int err = errno;
	struct http_conns *c = tracker;
	if (!c)
		return;
	/* One line per episode: a flood would otherwise write one per attempt. */
	int64_t now = clock_now_ms();
	if (c->accept_logged_ms == 0 || now - c->accept_logged_ms >= ACCEPT_LOG_INTERVAL_MS) {
		fprintf(stderr,
			"e2b-local-backend: accept: %s (%lu more not logged); closing idle "
			"connections or pausing; next report in %d s at the earliest\n",
			strerror(err), c->accept_unlogged, ACCEPT_LOG_INTERVAL_MS / 1000);
		c->accept_logged_ms = now;
		c->accept_unlogged = 0;
	} else {
		c->accept_unlogged++;
	}
	http_conns_list_adopt(c);
	/* At the descriptor limit, freeing one lets the pending client in on
	 * the next loop turn; without one to free, wait instead of spinning. */
	bool out_of_fds = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
	if (!(out_of_fds && http_conns_list_close_oldest_idle(c, -1)))
		pause_accepting(c, -1);
}

/* --- the tracker --------------------------------------------------------------- */

struct http_conns *http_conns_new(struct event_base *base, const struct http_conns_limits *limits)
{
	struct http_conns *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->base = base;
	c->max = limits->max_connections ? limits->max_connections : default_max();
	c->api_reserve = c->max / 4 < API_RESERVE_MAX ? c->max / 4 : API_RESERVE_MAX;
	c->per_sandbox = limits->per_sandbox ? limits->per_sandbox : HTTP_CONNS_DEFAULT_PER_SANDBOX;
	c->request_timeout.tv_sec = limits->request_timeout_s;
	c->adopt = event_new(base, -1, 0, on_adopt, c);
	c->resume = evtimer_new(base, on_resume, c);
	c->linger = http_linger_new(base);
	if (!c->adopt || !c->resume || !c->linger) {
		http_conns_free(c);
		return NULL;
	}
	tracker = c;
	return c;
}

void http_conns_free(struct http_conns *c)
{
	if (!c)
		return;
	http_conns_list_adopt(c);
	while (c->oldest) /* only if an evhttp outlived us */
		http_conns_list_unlink(c->oldest);
	while (c->servers) {
		struct http_conns_server *s = c->servers;
		c->servers = s->next;
		free(s);
	}
	if (c->adopt)
		event_free(c->adopt);
	if (c->resume)
		event_free(c->resume);
	http_linger_free(c->linger);
	free(c->pending);
	free(c->listeners);
	if (tracker == c)
		tracker = NULL;
	free(c);
}

size_t http_conns_max(const struct http_conns *c)
{
	return c->max;
}

size_t http_conns_api_reserve(const struct http_conns *c)
{
	return c->api_reserve;
}

int http_conns_attach(struct http_conns *c, struct evhttp *http, enum http_pool pool, http_verdict_fn verdict,
	void *arg)
{
	struct http_conns_server *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	*s = (struct http_conns_server){.next = c->servers,
		.tracker = c,
		.http = http,
		.pool = pool,
		.verdict = verdict,
		.verdict_arg = arg};
	c->servers = s;
	evhttp_set_bevcb(http, on_new_connection, s);
	return 0;
}

void http_conns_detach(struct http_conns *c, struct evhttp *http)
{
	http_conns_list_adopt(c); /* none may point at the server any more */
	for (struct http_conns_server **pp = &c->servers; *pp; pp = &(*pp)->next) {
		if ((*pp)->http == http) {
			struct http_conns_server *s = *pp;
			*pp = s->next;
			free(s);
			return;
		}
	}
}

void http_conns_watch_listener(struct http_conns *c, struct evconnlistener *listener, enum http_pool pool)
{
	evconnlistener_set_error_cb(listener, on_accept_error);
	if (c->listener_count == c->listener_cap) {
		size_t cap = c->listener_cap ? c->listener_cap * 2 : 8;
		struct http_conns_listener *grown = realloc(c->listeners, cap * sizeof *grown);
		if (!grown)
			return; /* still logged on errors, just never paused */
		c->listeners = grown;
		c->listener_cap = cap;
	}
	c->listeners[c->listener_count++] = (struct http_conns_listener){.l = listener, .pool = pool};
	if (c->paused[pool])
		evconnlistener_disable(listener);
}

void http_conns_unwatch_listener(struct http_conns *c, struct evconnlistener *listener)
{
	for (size_t i = 0; i < c->listener_count; i++) {
		if (c->listeners[i].l == listener) {
			c->listeners[i] = c->listeners[--c->listener_count];
			return;
		}
	}
}

/* --- requests ------------------------------------------------------------------ */

static void on_request_done(struct evhttp_request *req, void *arg)
{
	(void)req;
	struct http_conn *e = arg;
	e->busy = false;
	e->counted = false;
	e->body_bytes = 0;
	e->ends_itself = false;
	http_gate_request_done(e->gate);
	http_conns_list_arm_deadline(e); /* for the next request on this connection */
}

static struct http_conn *conn_of(struct evhttp_request *req)
{
	struct http_conns *c = tracker;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	if (!c || !evcon)
		return NULL;
	http_conns_list_adopt(c);
	return http_conns_list_find(c, evcon);
}

const struct http_verdict *http_conns_request_begins(struct evhttp_request *req)
{
	struct http_conn *e = conn_of(req);
	if (!e)
		return NULL;
	e->busy = true;
	e->body_bytes = 0; /* received: its handler takes it now, and frees it once answered */
	if (evbuffer_get_length(evhttp_request_get_input_buffer(req)) >= LARGE_BODY)
		mem_trim_soon();
	evtimer_del(e->deadline);
	evhttp_request_set_on_complete_cb(req, on_request_done, e);
	const struct http_verdict *v = http_gate_verdict(e->gate);
	return v->kind == HTTP_VERDICT_REFUSE && v->status ? v : NULL;
}

struct http_gate *http_conns_gate(struct evhttp_request *req)
{
	struct http_conn *e = conn_of(req);
	return e ? e->gate : NULL;
}

void http_conns_ends_itself(struct evhttp_request *req)
{
	struct http_conn *e = conn_of(req);
	if (e)
		e->ends_itself = true;
}

void http_conns_close_sandbox(struct http_conns *c, const char *id)
{
	http_conns_list_adopt(c);
	for (struct http_conn *e = c->oldest, *next; e; e = next) {
		next = e->next;
		if (!e->counted || e->ends_itself || strcmp(e->sandbox, id) != 0)
			continue;
		/* Cut, not ended: SO_LINGER 0 makes the close a reset that drops what
		 * the kernel still held to send (up to tcp_wmem's maximum, 4 MiB). */
		evutil_socket_t fd = bufferevent_getfd(e->bev);
		struct linger now = {.l_onoff = 1, .l_linger = 0};
		if (fd >= 0)
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof now);
		/* Freeing may free other connections (a proxy's), so start over. */
		evhttp_connection_free(e->evcon);
		next = c->oldest;
	}
}

void http_conn_set_closecb(struct evhttp_connection *evcon, void (*cb)(struct evhttp_connection *, void *),
	void *arg)
{
	struct http_conns *c = tracker;
	if (c)
		http_conns_list_adopt(c);
	struct http_conn *e = c ? http_conns_list_find(c, evcon) : NULL;
	if (!e) {
		(evhttp_connection_set_closecb)(evcon, cb, arg);
		return;
	}
	e->user_cb = cb;
	e->user_arg = arg;
}

void http_conn_gone_free_request(struct evhttp_request *req)
{
	if (evhttp_request_get_connection(req) == NULL)
		evhttp_request_free(req);
}
