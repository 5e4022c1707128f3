/* The HTTP side of Start and Connect (process_stream.h). */
#include "envd/process/process_stream.h"

#include "envd/process/process_manager.h"
#include "http/http_connect.h"
#include "http/http_conns.h"
#include "http/http_server.h"
#include "lib/base64.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct proc_stream {
	struct proc_stream *prev, *next;
	struct proc *proc;
	struct evhttp_request *req;
	struct evhttp_connection *evcon; /* NULL once the client is gone */
	bool kill_on_deadline;           /* Start: the deadline is the process lifetime */
	bool blocked;                    /* counted in proc->blocked */
	bool paused;
	int64_t keepalive_ms;
	struct event *keepalive;
	struct process_timer deadline;
};

static const char keepalive_json[] = "{\"event\":{\"keepalive\":{}}}";

static void put_header(char *frame, uint8_t flags, size_t len)
{
	frame[0] = (char)flags;
	frame[1] = (char)(len >> 24 & 0xff);
	frame[2] = (char)(len >> 16 & 0xff);
	frame[3] = (char)(len >> 8 & 0xff);
	frame[4] = (char)(len & 0xff);
}

static void arm_keepalive(struct proc_stream *s)
{
	if (s->paused)
		return;
	struct timeval tv = {.tv_sec = (time_t)(s->keepalive_ms / 1000),
		.tv_usec = (suseconds_t)(s->keepalive_ms % 1000) * 1000};
	evtimer_add(s->keepalive, &tv);
}

static struct evbuffer *connection_output(struct proc_stream *s)
{
	return bufferevent_get_output(evhttp_connection_get_bufferevent(s->evcon));
}

static void set_blocked(struct proc_stream *s, bool blocked)
{
	if (s->blocked == blocked)
		return;
	s->blocked = blocked;
	s->proc->blocked += blocked ? 1 : -1;
	process_update_reading(s->proc);
}

/* evhttp calls this once the connection's output buffer is empty. */
static void on_drained(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	set_blocked(arg, false);
}

/* Hands what is in pm->scratch (whole envelopes) to the client. Above the
 * high-water mark the process stops being read until this client has taken
 * everything. */
static void stream_flush(struct proc_stream *s)
{
	struct evbuffer *scratch = s->proc->pm->scratch;
	evhttp_send_reply_chunk_with_cb(s->req, scratch, on_drained, s);
	evbuffer_drain(scratch, evbuffer_get_length(scratch));
	if (evbuffer_get_length(connection_output(s)) > PROC_STREAM_HIGH_WATER)
		set_blocked(s, true);
}

static void stream_send(struct proc_stream *s, const char *frame, size_t len)
{
	evbuffer_add(s->proc->pm->scratch, frame, len);
	stream_flush(s);
}

static void send_json(struct proc_stream *s, const char *json)
{
	connect_envelope_add(s->proc->pm->scratch, 0, json, strlen(json));
	stream_flush(s);
}

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proc_stream *s = arg;
	send_json(s, keepalive_json);
	arm_keepalive(s);
}

static void unlink_stream(struct proc_stream *s)
{
	struct proc *p = s->proc;
	if (s->prev)
		s->prev->next = s->next;
	else
		p->streams = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

/* Ends the answer (optional end event, then end-stream with err or {}) if
 * the client is still there, and frees the stream. */
static void stream_close(struct proc_stream *s, const char *end_json, const struct err *err)
{
	struct proc *p = s->proc;
	unlink_stream(s);
	if (s->blocked) {
		s->blocked = false;
		p->blocked--;
	}
	if (!p->ended)
		process_update_reading(p); /* the last stream gone stops reading */
	if (s->evcon) {
		struct evbuffer *buf = p->pm->scratch;
		if (end_json) {
			char *text = malloc(strlen(end_json) + 32);
			if (text) {
				sprintf(text, "{\"event\":{\"end\":%s}}", end_json);
				connect_envelope_add(buf, 0, text, strlen(text));
				free(text);
			}
		}
		connect_end_stream_add(buf, err);
		evhttp_send_reply_chunk(s->req, buf);
		evbuffer_drain(buf, evbuffer_get_length(buf));
		http_conn_set_closecb(s->evcon, NULL, NULL);
		/* Back to the idle limits for the next request on this connection. */
		struct bufferevent *bev = evhttp_connection_get_bufferevent(s->evcon);
		struct timeval idle = {.tv_sec = HTTP_IDLE_TIMEOUT_S, .tv_usec = 0};
		bufferevent_set_timeouts(bev, &idle, &idle);
		evhttp_send_reply_end(s->req);
	}
	event_free(s->keepalive);
	process_timer_free(&s->deadline);
	free(s);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proc_stream *s = arg;
	s->deadline.armed = false;
	/* connect-go cancels the handler's context: the stream ends with
	 * deadline_exceeded and no end event. For Start the same timeout is the
	 * process lifetime, so the process is killed too. */
	if (s->kill_on_deadline)
		process_kill_group(s->proc, SIGKILL);
	struct err err;
	err_set(&err, CONNECT_DEADLINE_EXCEEDED, "context deadline exceeded");
	stream_close(s, NULL, &err);
}

/* The client went away (or the server is being freed). */
static void on_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct proc_stream *s = arg;
	struct evhttp_request *req = s->req;
	s->evcon = NULL;
	stream_close(s, NULL, NULL); /* does not touch req without evcon */
	http_conn_gone_free_request(req);
}

int process_stream_open(struct proc *p, struct evhttp_request *req, int64_t keepalive_ms, int64_t deadline_ms,
	bool kill_on_deadline)
{
	struct proc_stream *s = calloc(1, sizeof *s);
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	if (!s || !evcon || !(s->keepalive = evtimer_new(p->pm->base, on_keepalive, s)) ||
		process_timer_init(&s->deadline, p->pm->base, on_deadline, s) != 0) {
		if (s) {
			if (s->keepalive)
				event_free(s->keepalive);
			free(s);
		}
		struct err err;
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		return connect_reply_stream_error(req, &err);
	}
	s->proc = p;
	s->req = req;
	s->evcon = evcon;
	s->kill_on_deadline = kill_on_deadline;
	s->keepalive_ms = keepalive_ms;
	s->paused = p->paused;
	s->next = p->streams;
	if (p->streams)
		p->streams->prev = s;
	p->streams = s;
	process_update_reading(p);

	connect_stream_headers(req);
	evhttp_send_reply_start(req, 200, "OK");
	http_conn_set_closecb(evcon, on_conn_closed, s);
	/* At kill the process manager ends it (cut, or with isolation none the
	 * end event), not the tracker. */
	http_conns_ends_itself(req);
	/* A stream may rightly stay quiet for longer than the idle limit (the
	 * default keepalive is 90 s, a paused sandbox sends nothing), so only
	 * writing has a time limit: a client that accepts no bytes for
	 * PROC_STREAM_WRITE_TIMEOUT_S is dropped. */
	struct bufferevent *bev = evhttp_connection_get_bufferevent(evcon);
	struct timeval wtv = {.tv_sec = PROC_STREAM_WRITE_TIMEOUT_S, .tv_usec = 0};
	bufferevent_set_timeouts(bev, NULL, &wtv);
	/* Bytes a client sends meanwhile (a pipelined request) wait in the
	 * connection's gate, which stops reading at one head's worth
	 * (http_gate.h). */

	char start[64];
	snprintf(start, sizeof start, "{\"event\":{\"start\":{\"pid\":%u}}}", (unsigned)p->ns_pid);
	send_json(s, start);
	arm_keepalive(s);
	if (deadline_ms > 0) {
		if (s->paused)
			process_timer_suspend(&s->deadline);
		process_timer_start(&s->deadline, deadline_ms);
	}
	return 200;
}

int process_stream_replay(struct proc *p, struct evhttp_request *req)
{
	struct evbuffer *buf = evbuffer_new();
	char *end = p->end_json ? malloc(strlen(p->end_json) + 32) : NULL;
	char start[64];
	int n = snprintf(start, sizeof start, "{\"event\":{\"start\":{\"pid\":%u}}}", (unsigned)p->ns_pid);
	if (end)
		sprintf(end, "{\"event\":{\"end\":%s}}", p->end_json);
	if (!buf || !end || connect_envelope_add(buf, 0, start, (size_t)n) != 0 ||
		connect_envelope_add(buf, 0, end, strlen(end)) != 0 ||
		connect_end_stream_add(buf, NULL) != 0) {
		if (buf)
			evbuffer_free(buf);
		free(end);
		struct err err;
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		return connect_reply_stream_error(req, &err);
	}
	free(end);
	connect_stream_headers(req);
	evhttp_send_reply(req, 200, "OK", buf);
	evbuffer_free(buf);
	return 200;
}

static void stream_broadcast_data(struct proc *p, enum proc_output_kind kind, const uint8_t *data, size_t len)
{
	if (!p->streams)
		return; /* like envd: output nobody listens to is dropped */
	static const char *const names[] = {"stdout", "stderr", "pty"};
	char *frame = p->pm->frame_buf;
	int head =
		snprintf(frame + CONNECT_ENVELOPE_HEADER, 64, "{\"event\":{\"data\":{\"%s\":\"", names[kind]);
	char *b64 = frame + CONNECT_ENVELOPE_HEADER + head;
	base64_encode(data, len, b64);
	char *tail = b64 + base64_encoded_len(len);
	memcpy(tail, "\"}}}", 4);
	size_t json_len = (size_t)(tail + 4 - (frame + CONNECT_ENVELOPE_HEADER));
	put_header(frame, 0, json_len);
	for (struct proc_stream *s = p->streams; s; s = s->next) {
		stream_send(s, frame, CONNECT_ENVELOPE_HEADER + json_len);
		arm_keepalive(s); /* envd resets its keepalive ticker on data */
	}
}

static void stream_finish_all(struct proc *p)
{
	struct err err;
	err_set(&err, CONNECT_UNKNOWN, "end event channel closed before sending end event");
	while (p->streams)
		stream_close(p->streams, p->end_json, p->end_json ? NULL : &err);
}

static void stream_set_paused(struct proc *p, bool paused)
{
	for (struct proc_stream *s = p->streams; s; s = s->next) {
		if (s->paused == paused)
			continue;
		s->paused = paused;
		if (paused) {
			evtimer_del(s->keepalive);
			process_timer_suspend(&s->deadline);
		} else {
			arm_keepalive(s);
			process_timer_resume(&s->deadline);
		}
	}
}

static void stream_detach_all(struct proc *p)
{
	struct err err;
	err_set(&err, CONNECT_UNAVAILABLE, "the process is no longer tracked");
	while (p->streams)
		stream_close(p->streams, NULL, &err);
}

static void stream_cut_all(struct proc *p)
{
	while (p->streams) {
		struct proc_stream *s = p->streams;
		struct evhttp_connection *evcon = s->evcon;
		if (evcon)
			http_conn_set_closecb(evcon, NULL, NULL);
		s->evcon = NULL;
		stream_close(s, NULL, NULL);
		/* As E2B's proxy does when the sandbox behind it is gone: the
		 * connection drops, no end event is made up. */
		if (evcon)
			evhttp_connection_free(evcon);
	}
}

const struct process_stream_ops *process_stream_ops(void)
{
	static const struct process_stream_ops ops = {
		.data = stream_broadcast_data,
		.finish_all = stream_finish_all,
		.set_paused = stream_set_paused,
		.cut_all = stream_cut_all,
		.detach_all = stream_detach_all,
	};
	return &ops;
}
