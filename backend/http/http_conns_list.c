/* The connection tracker's list of connections (http_conns_list.h). */
#include "http/http_conns_list.h"

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdlib.h>

struct http_conn *http_conns_list_find(struct http_conns *c, const struct evhttp_connection *evcon)
{
	for (struct http_conn *e = c->newest; e; e = e->prev)
		if (e->evcon == evcon)
			return e;
	return NULL;
}

void http_conns_list_arm_deadline(struct http_conn *e)
{
	evtimer_add(e->deadline, &e->tracker->request_timeout);
}

bool http_conns_list_close_oldest_idle(struct http_conns *c, int pool)
{
	for (struct http_conn *e = c->oldest; e; e = e->next) {
		if (!e->busy && (pool < 0 || e->server->pool == (enum http_pool)pool)) {
			evhttp_connection_free(e->evcon); /* on_close unlinks e */
			return true;
		}
	}
	return false;
}

static void conn_free(struct http_conn *e)
{
	struct http_conns *c = e->tracker;
	http_gate_free(e->gate);
	if (e->deadline)
		event_free(e->deadline);
	c->count--;
	if (e->server->pool == HTTP_POOL_ENVD)
		c->envd_count--;
	free(e);
}

void http_conns_list_unlink(struct http_conn *e)
{
	struct http_conns *c = e->tracker;
	if (e->prev)
		e->prev->next = e->next;
	else
		c->oldest = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->newest = e->prev;
	conn_free(e);
}

static void on_close(struct evhttp_connection *evcon, void *arg)
{
	struct http_conn *e = arg;
	void (*cb)(struct evhttp_connection *, void *) = e->user_cb;
	void *cb_arg = e->user_arg;
	http_conns_list_unlink(e);
	if (cb)
		cb(evcon, cb_arg);
}

void http_conns_list_on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct http_conn *e = arg;
	/* No complete request in time: a slow or idle client. */
	if (!e->busy)
		evhttp_connection_free(e->evcon);
}

void http_conns_list_adopt(struct http_conns *c)
{
	for (size_t i = 0; i < c->pending_count; i++) {
		struct http_conn *e = c->pending[i];
		struct bufferevent *bev = e->bev;
		bufferevent_data_cb rcb, wcb;
		bufferevent_event_cb ecb;
		void *evcon = NULL;
		/* evhttp's callbacks take the connection as their argument;
		 * bufferevent_free clears them, so NULL means already gone. */
		bufferevent_getcb(bev, &rcb, &wcb, &ecb, &evcon);
		if (evcon && !e->gate) {
			evhttp_connection_free(evcon); /* out of memory: not served ungated */
			evcon = NULL;
		}
		if (evcon) {
			e->evcon = evcon;
			e->prev = c->newest;
			if (c->newest)
				c->newest->next = e;
			else
				c->oldest = e;
			c->newest = e;
			(evhttp_connection_set_closecb)(evcon, on_close, e);
			http_conns_list_arm_deadline(e);
		} else {
			conn_free(e);
		}
		bufferevent_decref(bev);
	}
	c->pending_count = 0;
}
