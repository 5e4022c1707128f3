/* The connection tracker's records, shared by its files: struct http_conns
 * (http_conns.c: the cap, the gate's verdicts, accepting, requests) and its
 * list of connections, oldest first, kept here: the connections evhttp made
 * since the last look are adopted (each with its deadline and the
 * tracker's close callback), a closed one leaves the list, the oldest idle
 * one is closed to make room. Calls http_gate.h. */
#ifndef E2B_BACKEND_HTTP_CONNS_LIST_H
#define E2B_BACKEND_HTTP_CONNS_LIST_H

#include "http/http_conns.h"

#include <event2/util.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

struct bufferevent;
struct event;
struct evconnlistener;
struct http_linger;

/* One server the tracker makes connections for. */
struct http_conns_server {
	struct http_conns_server *next;
	struct http_conns *tracker;
	struct evhttp *http;
	enum http_pool pool;
	http_verdict_fn verdict;
	void *verdict_arg;
};

struct http_conn {
	struct http_conn *prev, *next; /* oldest first */
	struct http_conns *tracker;
	struct http_conns_server *server;
	struct evhttp_connection *evcon; /* NULL until adopted */
	struct bufferevent *bev;
	struct http_gate *gate;
	struct event *deadline; /* armed while no request is in progress */
	bool busy;
	bool counted;        /* a request for sandbox[] is in progress */
	uint64_t body_bytes; /* ...whose body (READ) is being received: at most this much */
	bool ends_itself;
	char sandbox[64];
	void (*user_cb)(struct evhttp_connection *, void *);
	void *user_arg;
};

struct http_conns_listener {
	struct evconnlistener *l;
	enum http_pool pool;
};

struct http_conns {
	struct event_base *base;
	size_t max, api_reserve, per_sandbox;
	size_t count, envd_count; /* tracked + pending */
	struct timeval request_timeout;
	struct http_conn *oldest, *newest;
	struct http_conns_server *servers;
	/* Connections evhttp has not made yet (the bevcb runs before evhttp
	 * makes them); each holds a reference to its bufferevent, so that a
	 * connection evhttp frees at once cannot leave us a dangling pointer. */
	struct http_conn **pending;
	size_t pending_count, pending_cap;
	struct event *adopt;
	struct http_linger *linger; /* closed connections whose clients still send */
	struct http_conns_listener *listeners;
	size_t listener_count, listener_cap;
	struct event *resume;
	bool paused[2];
	int64_t accept_logged_ms; /* when an accept() failure was last logged */
	unsigned long accept_unlogged;
};

/* The tracked connection of evcon, NULL when none. */
struct http_conn *http_conns_list_find(struct http_conns *c, const struct evhttp_connection *evcon);
/* Starts tracking the connections evhttp has made since the last call. */
void http_conns_list_adopt(struct http_conns *c);
/* Takes e out of the list and frees it (its connection is gone). */
void http_conns_list_unlink(struct http_conn *e);
/* The deadline of e's next request starts now. */
void http_conns_list_arm_deadline(struct http_conn *e);
/* The deadline's event callback (arg: the connection): no complete request
 * in time, a slow or idle client is closed. */
void http_conns_list_on_deadline(evutil_socket_t fd, short what, void *arg);
/* Closes the oldest connection with no request in progress (in pool, or
 * any with -1); false when every one is busy. */
bool http_conns_list_close_oldest_idle(struct http_conns *c, int pool);

#endif
