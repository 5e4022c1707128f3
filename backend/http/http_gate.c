/* The connection gate (http_gate.h): reads heads and bodies itself, asks
 * the router, and hands evhttp one vetted request at a time. */
#include "http/http_gate.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#define PARK_BYTES (16 * 1024)     /* unread input before the socket is left alone */
#define BODY_HOLD (256 * 1024)     /* raw body bytes read ahead of decoding */
#define STREAM_HIGH (512 * 1024)   /* decoded bytes a STREAM handler has not taken */
#define RAW_HOLD (1024 * 1024)     /* bytes a RAW handler gets when it takes over */
#define DROP_MAX (4 * 1024 * 1024) /* a refused body is read and dropped up to this */
#define ROUNDS_PER_TURN 64         /* steps of one loop turn before yielding */

enum gate_mode {
	GATE_HEAD,   /* waiting for the next head */
	GATE_BODY,   /* READ: collecting the body */
	GATE_STREAM, /* STREAM: the handler takes the body */
	GATE_RAW,    /* RAW: holding bytes for the handler to take over */
	GATE_WAIT,   /* evhttp has the request: hold what follows */
	GATE_DROP,   /* a refused body: read and dropped */
	GATE_BROKEN, /* framing lost: everything dropped (up to DROP_MAX) */
	GATE_OFF     /* taken over */
};

struct http_gate {
	struct bufferevent *bev; /* referenced until the gate is freed */
	struct http_gate_hooks hooks;
	struct evbuffer_cb_entry *input_cb;
	struct event *run_ev;
	enum gate_mode mode;
	bool awaiting_answer; /* evhttp has a request of ours not yet answered */
	bool delivering, in_run, free_pending, close_wanted;
	struct evbuffer *held;        /* read, not yet used */
	struct evbuffer *body;        /* READ: the body so far; STREAM: not yet taken */
	struct http_head_parsed head; /* until evhttp has it */
	struct http_framing framing;
	bool upgrade;
	struct http_verdict verdict;
	uint64_t dropped;
	void (*body_cb)(void *arg);
	void *body_arg;
	bool body_news;
};

static size_t hold_cap(const struct http_gate *g)
{
	switch (g->mode) {
	case GATE_BODY:
	case GATE_STREAM:
	case GATE_DROP:
	case GATE_BROKEN:
		return BODY_HOLD;
	case GATE_RAW:
		return RAW_HOLD;
	default:
		return HTTP_HEAD_MAX_BYTES + 1024;
	}
}

/* Moves what the socket delivered into held, as far as the mode allows;
 * the rest waits in the input buffer (up to PARK_BYTES, then the socket is
 * not read). */
static size_t pull(struct http_gate *g)
{
	if (g->mode == GATE_OFF)
		return 0;
	struct evbuffer *in = bufferevent_get_input(g->bev);
	size_t have = evbuffer_get_length(g->held), cap = hold_cap(g);
	size_t n = evbuffer_get_length(in);
	if (have >= cap || n == 0)
		return 0;
	if (n > cap - have)
		n = cap - have;
	g->delivering = true; /* our own change: the input callback ignores it */
	evbuffer_remove_buffer(in, g->held, n);
	g->delivering = false;
	return n;
}

/* The gate's next step in this loop turn. */
static void schedule(struct http_gate *g)
{
	if (!g->free_pending)
		event_active(g->run_ev, EV_TIMEOUT, 1);
}

/* ... or in the next one, after every other client's events: a zero timer
 * (event_active would run it again in this turn, before any I/O). */
static void schedule_later(struct http_gate *g)
{
	static const struct timeval zero = {0, 0};
	evtimer_add(g->run_ev, &zero);
}

static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	(void)buf;
	struct http_gate *g = arg;
	if (g->delivering || g->mode == GATE_OFF || info->n_added == 0)
		return;
	pull(g);
	schedule(g);
}

/* Gives evhttp bytes and lets it parse them now (it never reads by itself:
 * the read watermarks keep its callback quiet). */
static void deliver(struct http_gate *g, struct evbuffer *bytes)
{
	g->delivering = true;
	g->awaiting_answer = true;
	/* A socket bufferevent keeps its input's end frozen except while it
	 * reads; open it for the bytes we put in. */
	struct evbuffer *in = bufferevent_get_input(g->bev);
	evbuffer_unfreeze(in, 0);
	evbuffer_add_buffer(in, bytes);
	evbuffer_freeze(in, 0);
	bufferevent_trigger(g->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS);
	g->delivering = false;
}

/* The head (and a READ body) to evhttp; the parsed head is done with. */
static void deliver_request(struct http_gate *g, struct evbuffer *body)
{
	struct evbuffer *bytes = evbuffer_new();
	size_t n = body ? evbuffer_get_length(body) : 0;
	if (!bytes || http_head_rebuild(&g->head, n, bytes) != 0) {
		if (bytes)
			evbuffer_free(bytes);
		g->mode = GATE_BROKEN;
		g->close_wanted = true;
		return;
	}
	if (body)
		evbuffer_add_buffer(bytes, body);
	http_head_clear(&g->head);
	deliver(g, bytes);
	evbuffer_free(bytes);
}

/* A head or body that cannot be read: evhttp answers 400 to a request line
 * it cannot parse, and closes the connection. */
static void malformed(struct http_gate *g)
{
	http_head_clear(&g->head);
	g->mode = GATE_BROKEN;
	g->dropped = 0;
	evbuffer_drain(g->held, evbuffer_get_length(g->held));
	struct evbuffer *bad = evbuffer_new();
	if (!bad || evbuffer_add(bad, "-\r\n\r\n", 5) != 0) {
		g->close_wanted = true;
	} else {
		deliver(g, bad);
	}
	if (bad)
		evbuffer_free(bad);
}

/* The request goes to evhttp without its body, to be answered with an
 * error (the router's, or status and message when message is given); the
 * body is read and dropped. */
static void refuse(struct http_gate *g, int status, const char *message)
{
	g->verdict.kind = HTTP_VERDICT_REFUSE;
	if (message) {
		g->verdict.status = status;
		snprintf(g->verdict.message, sizeof g->verdict.message, "%s", message);
	}
	g->mode = g->framing.done ? GATE_WAIT : GATE_DROP;
	g->dropped = 0;
	deliver_request(g, NULL);
}

static void too_large(struct http_gate *g)
{
	char msg[96];
	snprintf(msg, sizeof msg, "request body too large (at most %llu bytes)",
		(unsigned long long)g->verdict.max_body);
	refuse(g, 413, msg);
}

/* "100 Continue" straight to the socket: evhttp's own would need its
 * internals, and the output is empty between requests, so nothing can
 * overtake it. A client that does not get it sends the body anyway. */
static void send_continue(struct http_gate *g)
{
	static const char line[] = "HTTP/1.1 100 Continue\r\n\r\n";
	if (evbuffer_get_length(bufferevent_get_output(g->bev)) == 0)
		(void)!send(bufferevent_getfd(g->bev), line, sizeof line - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static bool step_head(struct http_gate *g)
{
	size_t skip;
	long end = http_head_end(g->held, &skip);
	if (end == 0)
		return false;
	if (end < 0) {
		malformed(g);
		return true;
	}
	evbuffer_drain(g->held, skip);
	size_t len = (size_t)end - skip;
	int rc = http_head_parse(g->held, len, &g->head);
	evbuffer_drain(g->held, len);
	if (rc != 0) {
		malformed(g);
		return true;
	}
	g->framing = g->head.framing;
	g->upgrade = g->head.upgrade;
	memset(&g->verdict, 0, sizeof g->verdict);
	g->verdict.kind = HTTP_VERDICT_READ;
	g->verdict.max_body = 1024 * 1024;
	g->hooks.verdict(&g->head.view, &g->verdict, g->hooks.arg);
	enum http_verdict_kind kind = g->verdict.kind;
	if (kind == HTTP_VERDICT_REFUSE) {
		refuse(g, 0, NULL); /* the status and message, if any, are set */
		return true;
	}
	if ((kind == HTTP_VERDICT_READ || kind == HTTP_VERDICT_STREAM) &&
		g->framing.kind == HTTP_FRAMING_LENGTH && g->framing.length > g->verdict.max_body) {
		too_large(g);
		return true;
	}
	if (g->head.expect_continue && !g->framing.done)
		send_continue(g);
	evbuffer_drain(g->body, evbuffer_get_length(g->body));
	if (kind == HTTP_VERDICT_READ) {
		g->mode = GATE_BODY;
	} else {
		g->mode = kind == HTTP_VERDICT_STREAM ? GATE_STREAM : GATE_RAW;
		deliver_request(g, NULL);
		/* evhttp stops reading when it dispatches; the body is ours to read. */
		if (!g->free_pending)
			bufferevent_enable(g->bev, EV_READ);
	}
	return true;
}

static bool step_body(struct http_gate *g)
{
	size_t before = evbuffer_get_length(g->held);
	uint64_t room = g->verdict.max_body + 1 - g->framing.decoded;
	if (http_framing_take(&g->framing, g->held, g->body, (size_t)room, false) != 0) {
		malformed(g);
		return true;
	}
	if (g->framing.decoded > g->verdict.max_body) {
		evbuffer_drain(g->body, evbuffer_get_length(g->body));
		too_large(g);
		return true;
	}
	if (g->framing.done) {
		g->mode = GATE_WAIT;
		deliver_request(g, g->body);
		return true;
	}
	return evbuffer_get_length(g->held) != before;
}

static bool step_stream(struct http_gate *g)
{
	size_t have = evbuffer_get_length(g->body);
	if (have >= STREAM_HIGH)
		return false;
	size_t before = evbuffer_get_length(g->held);
	bool failed = http_framing_take(&g->framing, g->held, g->body, STREAM_HIGH - have, false) != 0;
	if (!failed && g->framing.decoded > g->verdict.max_body)
		failed = true; /* chunked past the limit: the handler sees a failed body */
	bool moved = evbuffer_get_length(g->held) != before;
	if (moved || failed || g->framing.done)
		g->body_news = true;
	if (failed) {
		g->mode = GATE_BROKEN;
		g->framing.failed = true;
		g->dropped = 0;
	} else if (g->framing.done) {
		g->mode = GATE_WAIT;
	}
	return moved || failed;
}

/* A refused body, read by its framing and dropped; once the framing is
 * lost, everything is dropped. Past DROP_MAX the connection goes (after the
 * answer): reading on while the client still sends keeps a reset from
 * destroying the answer it has not read yet. */
static bool step_drop(struct http_gate *g)
{
	size_t before = evbuffer_get_length(g->held);
	if (g->mode == GATE_BROKEN)
		evbuffer_drain(g->held, before);
	else if (http_framing_take(&g->framing, g->held, NULL, SIZE_MAX, false) != 0)
		g->mode = GATE_BROKEN;
	g->dropped += before - evbuffer_get_length(g->held);
	if (g->mode == GATE_DROP && g->framing.done)
		g->mode = g->awaiting_answer ? GATE_WAIT : GATE_HEAD;
	else if (g->dropped > DROP_MAX)
		g->close_wanted = true;
	return before != evbuffer_get_length(g->held);
}

static bool step(struct http_gate *g)
{
	switch (g->mode) {
	case GATE_HEAD:
		return step_head(g);
	case GATE_BODY:
		return step_body(g);
	case GATE_STREAM:
		return step_stream(g);
	case GATE_DROP:
	case GATE_BROKEN:
		return step_drop(g);
	default:
		return false; /* RAW, WAIT, OFF: hold */
	}
}

static void destroy(struct http_gate *g)
{
	event_free(g->run_ev);
	evbuffer_free(g->held);
	evbuffer_free(g->body);
	http_head_clear(&g->head);
	bufferevent_decref(g->bev);
	free(g);
}

static void run(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct http_gate *g = arg;
	g->in_run = true;
	int rounds = 0;
	for (; rounds < ROUNDS_PER_TURN && !g->free_pending && !g->close_wanted; rounds++) {
		bool progress = step(g);
		if (!g->free_pending)
			progress |= pull(g) > 0;
		if (!progress)
			break;
	}
	if (!g->free_pending && g->body_news && g->body_cb) {
		g->body_news = false;
		g->body_cb(g->body_arg);
	}
	if (!g->free_pending && g->close_wanted && !g->awaiting_answer)
		g->hooks.close(g->hooks.arg); /* frees the connection, and with it g */
	else if (!g->free_pending && rounds == ROUNDS_PER_TURN)
		schedule_later(g); /* more to do: after other clients' turn */
	g->in_run = false;
	if (g->free_pending)
		destroy(g);
}

struct http_gate *http_gate_new(struct event_base *base, struct bufferevent *bev,
	const struct http_gate_hooks *hooks)
{
	struct http_gate *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->bev = bev;
	g->hooks = *hooks;
	g->held = evbuffer_new();
	g->body = evbuffer_new();
	g->run_ev = event_new(base, -1, 0, run, g);
	g->input_cb = g->held && g->body && g->run_ev
		? evbuffer_add_cb(bufferevent_get_input(bev), on_input, g)
		: NULL;
	if (!g->input_cb) {
		if (g->run_ev)
			event_free(g->run_ev);
		if (g->held)
			evbuffer_free(g->held);
		if (g->body)
			evbuffer_free(g->body);
		free(g);
		return NULL;
	}
	TAILQ_INIT(&g->head.headers);
	bufferevent_incref(bev);
	/* Low above high: evhttp's read callback never runs on its own. */
	bufferevent_setwatermark(bev, EV_READ, PARK_BYTES + 1, PARK_BYTES);
	return g;
}

void http_gate_free(struct http_gate *g)
{
	if (!g)
		return;
	if (g->input_cb) {
		evbuffer_remove_cb_entry(bufferevent_get_input(g->bev), g->input_cb);
		g->input_cb = NULL;
	}
	g->body_cb = NULL;
	if (g->in_run)
		g->free_pending = true;
	else
		destroy(g);
}

const struct http_verdict *http_gate_verdict(const struct http_gate *g)
{
	return &g->verdict;
}

void http_gate_request_done(struct http_gate *g)
{
	g->awaiting_answer = false;
	g->body_cb = NULL;
	if (g->mode == GATE_WAIT) {
		g->mode = GATE_HEAD;
	} else if (g->mode == GATE_RAW || g->mode == GATE_STREAM) {
		/* Answered before its body was all taken (an error, a 502):
		 * the rest is dropped. */
		g->mode = GATE_DROP;
		g->dropped = 0;
	}
	/* After evhttp has finished with the answer and readied the next request. */
	schedule(g);
}

struct evbuffer *http_gate_body(struct http_gate *g)
{
	return g->body;
}

void http_gate_body_notify(struct http_gate *g, void (*cb)(void *arg), void *arg)
{
	g->body_cb = cb;
	g->body_arg = arg;
	if (!cb)
		return;
	g->body_news = true; /* what has come already */
	schedule(g);
}

void http_gate_body_taken(struct http_gate *g)
{
	schedule(g);
}

bool http_gate_body_done(const struct http_gate *g)
{
	return g->framing.done && !g->framing.failed;
}

int http_gate_body_error(const struct http_gate *g)
{
	if (g->framing.decoded > g->verdict.max_body)
		return 413;
	return g->framing.failed ? 400 : 0;
}

void http_gate_take_over(struct http_gate *g, struct evbuffer *raw, struct http_framing *framing,
	bool *upgrade)
{
	evbuffer_remove_cb_entry(bufferevent_get_input(g->bev), g->input_cb);
	g->input_cb = NULL;
	evbuffer_add_buffer(raw, g->held);
	evbuffer_add_buffer(raw, bufferevent_get_input(g->bev));
	bufferevent_setwatermark(g->bev, EV_READ, 0, 0);
	*framing = g->framing;
	*upgrade = g->upgrade;
	g->mode = GATE_OFF;
}
