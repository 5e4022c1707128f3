/* The connection gate: every byte a client sends passes through it before
 * evhttp sees any, so that a request is routed and authenticated on its
 * head alone, before its body is read.
 *
 * libevent 2.1's evhttp reads a whole body (up to its size limit) before it
 * calls anyone, and offers no hook before that for an incoming request. So
 * the gate sits on the input buffer of the connection's bufferevent (which
 * the tracker creates, http_conns.c): it takes every byte out of it as it
 * arrives, finds the end of the head, parses it (http_head.h) and asks the
 * server's router for a verdict (struct http_verdict):
 *
 *   READ    read the body, at most max_body bytes (a longer one is 413 at
 *           once), then hand evhttp the request;
 *   STREAM  hand evhttp the request at once with an empty body; the handler
 *           takes the body piece by piece as it arrives (http_gate_body),
 *           and reading stops while it has not taken what it was given;
 *   RAW     the same, but the handler takes the connection over with the
 *           bytes still unread (the port proxy, http_gate_take_over);
 *   REFUSE  hand evhttp the request at once with an empty body; the router
 *           answers with its error, or with status and message when set.
 *           The body is read and dropped (up to 4 MiB; then the connection
 *           is closed), so the next request on the connection still parses.
 *
 * evhttp is only ever given one complete request at a time, framed by a
 * Content-Length the gate chose; bytes after it wait in the gate until the
 * answer is sent (at most one head's worth; then the socket is not read).
 * evhttp's own reading is kept out of the way with read watermarks whose low
 * mark is above the high one: its read callback never runs on its own. */
#ifndef E2B_BACKEND_HTTP_GATE_H
#define E2B_BACKEND_HTTP_GATE_H

#include "http/http_head.h"

#include <stdbool.h>
#include <stdint.h>

struct bufferevent;
struct event_base;
struct evbuffer;

enum http_verdict_kind {
	HTTP_VERDICT_READ,
	HTTP_VERDICT_STREAM,
	HTTP_VERDICT_RAW,
	HTTP_VERDICT_REFUSE
};

struct http_verdict {
	enum http_verdict_kind kind;
	uint64_t max_body; /* READ and STREAM: a longer body is refused with 413 */
	int status;        /* REFUSE: 0 lets the router answer; else this status... */
	char message[160]; /* ...and message */
	char sandbox[64];  /* the sandbox the request is for ("" none): counted per sandbox */
};

/* A server's router: fills v for a head (v starts as READ of 1 MiB). */
typedef void (*http_verdict_fn)(const struct http_head *head, struct http_verdict *v, void *arg);

struct http_gate_hooks {
	/* The server's router, then the tracker's own checks, in one call. */
	void (*verdict)(const struct http_head *head, struct http_verdict *v, void *arg);
	/* The connection must go (a refused body too long to read and drop). */
	void (*close)(void *arg);
	void *arg;
};

struct http_gate;

/* Starts gating bev's input. NULL when out of memory. */
struct http_gate *http_gate_new(struct event_base *base, struct bufferevent *bev,
	const struct http_gate_hooks *hooks);
void http_gate_free(struct http_gate *g);

/* The verdict of the request evhttp is answering. */
const struct http_verdict *http_gate_verdict(const struct http_gate *g);
/* Its answer is sent: on to the next request. */
void http_gate_request_done(struct http_gate *g);

/* STREAM: the body's bytes so far (the handler drains what it uses, then
 * calls http_gate_body_taken so that more is read). cb runs when more has
 * come, at the end of the body, and on a framing error; NULL stops it (a
 * handler that is done before its connection). */
struct evbuffer *http_gate_body(struct http_gate *g);
void http_gate_body_notify(struct http_gate *g, void (*cb)(void *arg), void *arg);
void http_gate_body_taken(struct http_gate *g);
bool http_gate_body_done(const struct http_gate *g);
/* 0 while the body is fine, 400 once its framing is malformed, 413 once it
 * is longer than the verdict's max_body. */
int http_gate_body_error(const struct http_gate *g);

/* RAW: stops gating and moves every byte read after the head into raw;
 * framing is the body's (as sent), upgrade whether the head asked for one.
 * The caller owns the bufferevent's reading from now on. */
void http_gate_take_over(struct http_gate *g, struct evbuffer *raw, struct http_framing *framing,
	bool *upgrade);

#endif
