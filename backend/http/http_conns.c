/* Tracking open HTTP connections: the cap, the request deadline and the
 * accept back-off (see http_conns.h). */
#include "http/http_conns.h"

#include "lib/clock.h"

#include <errno.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define ACCEPT_PAUSE_MS 250
#define ACCEPT_LOG_INTERVAL_MS 10000
struct conn {
	struct conn *prev, *next; /* oldest first */
	struct http_conns *owner;
	struct evhttp_connection *evcon;
	struct event *deadline; /* armed while no request is in progress */
	bool busy;
	void (*user_cb)(struct evhttp_connection *, void *);
	void *user_arg;
};

struct http_conns {
	struct event_base *base;
	size_t max;
	size_t count; /* tracked + pending */
	struct timeval request_timeout;
	struct conn *oldest, *newest;
	/* Bufferevents handed to evhttp whose connection does not exist yet
	 * (the bevcb runs before evhttp makes it). Each holds a reference, so
	 * that a connection evhttp frees at once cannot leave us a dangling
	 * pointer. */
	struct bufferevent **pending;
	size_t pending_count, pending_cap;
	struct event *adopt;
	/* The shared listeners and one per sandbox (envd_listener.h). */
	struct evconnlistener **listeners;
	size_t listener_count, listener_cap;
	struct event *resume;
	bool paused;
	int64_t accept_logged_ms; /* when an accept() failure was last logged */
	unsigned long accept_unlogged;
};

static struct http_conns *tracker; /* the one per process */

static size_t default_max(void)
{
	struct rlimit rl;
	size_t max = HTTP_CONNS_DEFAULT_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		size_t budget = rl.rlim_cur > HTTP_CONNS_FD_RESERVE + 8
			? (size_t)rl.rlim_cur - HTTP_CONNS_FD_RESERVE : 8;
		if (budget < max)
			max = budget;
	}
	return max;
}

static struct conn *find(struct http_conns *c, const struct evhttp_connection *evcon)
{
	for (struct conn *e = c->newest; e; e = e->prev)
		if (e->evcon == evcon)
			return e;
	return NULL;
}

static void arm_deadline(struct conn *e)
{
	evtimer_add(e->deadline, &e->owner->request_timeout);
}

static void set_listeners(struct http_conns *c, bool on)
{
	for (size_t i = 0; i < c->listener_count; i++) {
		if (on)
			evconnlistener_enable(c->listeners[i]);
		else
			evconnlistener_disable(c->listeners[i]);
	}
	c->paused = !on;
}

/* Stops accepting for a moment; the kernel keeps new clients in the backlog. */
static void pause_accepting(struct http_conns *c)
{
	if (c->paused)
		return;
	set_listeners(c, false);
	struct timeval tv = {.tv_sec = 0, .tv_usec = ACCEPT_PAUSE_MS * 1000};
	evtimer_add(c->resume, &tv);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	set_listeners(arg, true);
}

/* Closes the oldest connection with no request in progress. */
static bool close_oldest_idle(struct http_conns *c)
{
	for (struct conn *e = c->oldest; e; e = e->next) {
		if (!e->busy) {
			evhttp_connection_free(e->evcon); /* on_close unlinks e */
			return true;
		}
	}
	return false;
}

static void unlink_conn(struct conn *e)
{
	struct http_conns *c = e->owner;
	if (e->prev)
		e->prev->next = e->next;
	else
		c->oldest = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->newest = e->prev;
	event_free(e->deadline);
	c->count--;
	free(e);
}

static void on_close(struct evhttp_connection *evcon, void *arg)
{
	struct conn *e = arg;
	void (*cb)(struct evhttp_connection *, void *) = e->user_cb;
	void *cb_arg = e->user_arg;
	unlink_conn(e);
	if (cb)
		cb(evcon, cb_arg);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct conn *e = arg;
	/* No complete request in time: a slow or idle client. */
	if (!e->busy)
		evhttp_connection_free(e->evcon);
}

/* Starts tracking the connections evhttp has made since the last call. */
static void adopt_pending(struct http_conns *c)
{
	for (size_t i = 0; i < c->pending_count; i++) {
		struct bufferevent *bev = c->pending[i];
		bufferevent_data_cb rcb, wcb;
		bufferevent_event_cb ecb;
		void *evcon = NULL;
		/* evhttp's callbacks take the connection as their argument;
		 * bufferevent_free clears them, so NULL means already gone. */
		bufferevent_getcb(bev, &rcb, &wcb, &ecb, &evcon);
		struct conn *e = evcon ? calloc(1, sizeof *e) : NULL;
		if (e)
			e->deadline = evtimer_new(c->base, on_deadline, e);
		if (e && e->deadline) {
			e->owner = c;
			e->evcon = evcon;
			e->prev = c->newest;
			if (c->newest)
				c->newest->next = e;
			else
				c->oldest = e;
			c->newest = e;
			(evhttp_connection_set_closecb)(evcon, on_close, e);
			arm_deadline(e);
		} else {
			free(e); /* gone, or out of memory: left untracked */
			c->count--;
		}
		bufferevent_decref(bev);
	}
	c->pending_count = 0;
}

static void on_adopt(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	adopt_pending(arg);
}

/* evhttp's hook for each accepted connection, before it exists. */
static struct bufferevent *on_new_connection(struct event_base *base, void *arg)
{
	struct http_conns *c = arg;
	adopt_pending(c);
	/* The options evhttp would use itself. */
	struct bufferevent *bev = bufferevent_socket_new(base, -1, 0);
	if (!bev)
		return NULL;
	if (c->pending_count == c->pending_cap) {
		size_t cap = c->pending_cap ? c->pending_cap * 2 : 16;
		struct bufferevent **grown = realloc(c->pending, cap * sizeof *grown);
		if (!grown)
			return bev; /* untracked, but served */
		c->pending = grown;
		c->pending_cap = cap;
	}
	bufferevent_incref(bev);
	c->pending[c->pending_count++] = bev;
	c->count++;
	event_active(c->adopt, EV_TIMEOUT, 1);
	if (c->count >= c->max && !close_oldest_idle(c))
		pause_accepting(c); /* every connection is busy */
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
		fprintf(stderr, "e2b-local-backend: accept: %s (%lu more not logged); closing idle "
			"connections or pausing; next report in %d s at the earliest\n", strerror(err),
			c->accept_unlogged, ACCEPT_LOG_INTERVAL_MS / 1000);
		c->accept_logged_ms = now;
		c->accept_unlogged = 0;
	} else {
		c->accept_unlogged++;
	}
	adopt_pending(c);
	/* At the descriptor limit, freeing one lets the pending client in on
	 * the next loop turn; without one to free, wait instead of spinning. */
	bool out_of_fds = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
	if (!(out_of_fds && close_oldest_idle(c)))
		pause_accepting(c);
}

struct http_conns *http_conns_new(struct event_base *base, size_t max_connections,
	long request_timeout_s)
{
	struct http_conns *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->base = base;
	c->max = max_connections ? max_connections : default_max();
	c->request_timeout.tv_sec = request_timeout_s;
	c->adopt = event_new(base, -1, 0, on_adopt, c);
	c->resume = evtimer_new(base, on_resume, c);
	if (!c->adopt || !c->resume) {
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
	adopt_pending(c);
	while (c->oldest) /* only if an evhttp outlived us */
		unlink_conn(c->oldest);
	if (c->adopt)
		event_free(c->adopt);
	if (c->resume)
		event_free(c->resume);
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

void http_conns_attach(struct http_conns *c, struct evhttp *http)
{
	evhttp_set_bevcb(http, on_new_connection, c);
}

void http_conns_watch_listener(struct http_conns *c, struct evconnlistener *listener)
{
	evconnlistener_set_error_cb(listener, on_accept_error);
	if (c->listener_count == c->listener_cap) {
		size_t cap = c->listener_cap ? c->listener_cap * 2 : 8;
		struct evconnlistener **grown = realloc(c->listeners, cap * sizeof *grown);
		if (!grown)
			return; /* still logged on errors, just never paused */
		c->listeners = grown;
		c->listener_cap = cap;
	}
	c->listeners[c->listener_count++] = listener;
	if (c->paused)
		evconnlistener_disable(listener);
}

void http_conns_unwatch_listener(struct http_conns *c, struct evconnlistener *listener)
{
	for (size_t i = 0; i < c->listener_count; i++) {
		if (c->listeners[i] == listener) {
			c->listeners[i] = c->listeners[--c->listener_count];
			return;
		}
	}
}

static void on_request_done(struct evhttp_request *req, void *arg)
{
	(void)req;
	struct conn *e = arg;
	e->busy = false;
	arm_deadline(e); /* for the next request on this connection */
}

void http_conns_request_begins(struct evhttp_request *req)
{
	struct http_conns *c = tracker;
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	if (!c || !evcon)
		return;
	adopt_pending(c);
	struct conn *e = find(c, evcon);
	if (!e)
		return;
	e->busy = true;
	evtimer_del(e->deadline);
	evhttp_request_set_on_complete_cb(req, on_request_done, e);
}

void http_conn_set_closecb(struct evhttp_connection *evcon,
	void (*cb)(struct evhttp_connection *, void *), void *arg)
{
	struct http_conns *c = tracker;
	if (c)
		adopt_pending(c);
	struct conn *e = c ? find(c, evcon) : NULL;
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
