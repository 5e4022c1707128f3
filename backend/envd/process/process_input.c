/* stdin and PTY input of a process (process_input.h): what the pipe or PTY
 * accepts is written at once, the rest is queued and written when it is
 * writable; each SendInput is answered once its bytes are written, and
 * CloseStdin once the queue is empty. */
#include "envd/process/process_input.h"

#include "http/http_connect.h"
#include "http/http_conns.h"
#include "lib/mem_trim.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Answers a held input request (clearing its close callback first). */
static void answer_wait(struct proc_input_wait *w, const struct err *err)
{
	if (w->evcon)
		http_conn_set_closecb(w->evcon, NULL, NULL);
	if (err)
		connect_reply_unary_error(w->req, err);
	else
		connect_reply_unary(w->req, cJSON_CreateObject());
	free(w);
}

static void unlink_wait(struct proc_input_wait *w)
{
	for (struct proc_input_wait **pp = &w->proc->waits; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			return;
		}
	}
}

/* Go's text for a write error: "write |1: broken pipe". */
static void input_error(const struct proc *p, int err_no, struct err *err)
{
	char text[128];
	snprintf(text, sizeof text, "%s", strerror(err_no));
	if (text[0] >= 'A' && text[0] <= 'Z')
		text[0] = (char)(text[0] + 32);
	if (p->is_pty)
		err_set(err, CONNECT_INTERNAL,
			"error writing to tty: error writing to tty of process '%d': write /dev/ptmx: %s",
			(int)p->ns_pid, text);
	else
		err_set(err, CONNECT_INTERNAL,
			"error writing to stdin: error writing to stdin of process '%d': write |1: %s",
			(int)p->ns_pid, text);
}

static void close_input(struct proc *p)
{
	if (p->in_ev)
		event_free(p->in_ev);
	p->in_ev = NULL;
	if (p->in_fd >= 0)
		close(p->in_fd);
	p->in_fd = -1;
	if (p->in_queue)
		evbuffer_drain(p->in_queue, evbuffer_get_length(p->in_queue));
}

/* Answers every held request: close requests succeed, input requests fail
 * with err_no (the pipe broke or the process is gone). */
static void fail_waits(struct proc *p, int err_no)
{
	struct err err;
	input_error(p, err_no, &err);
	while (p->waits) {
		struct proc_input_wait *w = p->waits;
		p->waits = w->next;
		answer_wait(w, w->close_after ? NULL : &err);
	}
}

static void reply_ok(struct evhttp_request *req)
{
	connect_reply_unary(req, cJSON_CreateObject());
}

static void on_wait_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct proc_input_wait *w = arg;
	unlink_wait(w);
	/* evhttp frees a request it still holds; one it let go is ours. */
	if (!evhttp_request_get_connection(w->req))
		evhttp_request_free(w->req);
	free(w);
}

static void hold(struct proc *p, struct evhttp_request *req, bool close_after)
{
	struct proc_input_wait *w = calloc(1, sizeof *w);
	if (!w) {
		struct err err;
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		connect_reply_unary_error(req, &err);
		return;
	}
	w->proc = p;
	w->req = req;
	w->until = p->in_queued;
	w->close_after = close_after;
	w->evcon = evhttp_request_get_connection(req);
	/* Its body was decoded already: a held request keeps no copy. */
	struct evbuffer *body = evhttp_request_get_input_buffer(req);
	evbuffer_drain(body, evbuffer_get_length(body));
	if (w->evcon)
		http_conn_set_closecb(w->evcon, on_wait_conn_closed, w);
	struct proc_input_wait **pp = &p->waits;
	while (*pp)
		pp = &(*pp)->next;
	*pp = w;
}

/* Answers the held requests whose bytes are all written. */
static void answer_written(struct proc *p)
{
	while (p->waits && p->waits->until <= p->in_written) {
		struct proc_input_wait *w = p->waits;
		p->waits = w->next;
		if (w->close_after) {
			close_input(p);
			p->in_closing = false;
		}
		answer_wait(w, NULL);
	}
}

static void on_input_writable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct proc *p = arg;
	int n = evbuffer_write(p->in_queue, fd);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		p->in_errno = errno;
		evbuffer_drain(p->in_queue, evbuffer_get_length(p->in_queue));
		event_del(p->in_ev);
		p->in_written = p->in_queued;
		/* Queued input is lost: fail it; a pending close still succeeds. */
		struct err err;
		input_error(p, p->in_errno, &err);
		while (p->waits) {
			struct proc_input_wait *w = p->waits;
			p->waits = w->next;
			if (w->close_after) {
				close_input(p);
				p->in_closing = false;
			}
			answer_wait(w, w->close_after ? NULL : &err);
		}
		return;
	}
	p->in_written += (uint64_t)n;
	if (evbuffer_get_length(p->in_queue) == 0) {
		event_del(p->in_ev);
		mem_trim_soon(); /* the queue's blocks are free (up to PROC_INPUT_PENDING_MAX) */
	}
	answer_written(p);
}

/* Input queued for the sandbox's processes, not yet taken by them. */
static size_t pending_input(const struct proc *p)
{
	size_t sum = 0;
	for (const struct proc *q = p->pm->head; q; q = q->next)
		if (q->sb == p->sb && q->in_queue)
			sum += evbuffer_get_length(q->in_queue);
	return sum;
}

void process_send_input(struct proc *p, struct evhttp_request *req, const uint8_t *data, size_t len)
{
	struct err err;
	if (p->in_fd < 0 || p->in_closing) {
		if (p->is_pty)
			err_set(&err, CONNECT_INTERNAL, "error writing to tty: tty closed");
		else
			err_set(&err, CONNECT_INTERNAL,
				"error writing to stdin: stdin not enabled or closed");
		connect_reply_unary_error(req, &err);
		return;
	}
	if (p->in_errno) {
		input_error(p, p->in_errno, &err);
		connect_reply_unary_error(req, &err);
		return;
	}
	if (len == 0) {
		reply_ok(req);
		return;
	}
	/* Checked before any byte is written, so a refused call wrote nothing. */
	size_t pending = pending_input(p);
	if (pending + len > PROC_INPUT_PENDING_MAX) {
		err_set(&err, CONNECT_RESOURCE_EXHAUSTED,
			"too much input waiting for the sandbox's processes to read it (%zu bytes; at most "
			"%d MiB)",
			pending, PROC_INPUT_PENDING_MAX >> 20);
		connect_reply_unary_error(req, &err);
		return;
	}
	size_t done = 0;
	if (evbuffer_get_length(p->in_queue) == 0) {
		ssize_t n = write(p->in_fd, data, len);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			p->in_errno = errno;
			input_error(p, errno, &err);
			connect_reply_unary_error(req, &err);
			return;
		}
		done = n > 0 ? (size_t)n : 0;
	}
	p->in_queued += len;
	p->in_written += done;
	if (done == len) {
		reply_ok(req);
		return;
	}
	if (evbuffer_add(p->in_queue, data + done, len - done) != 0) {
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		connect_reply_unary_error(req, &err);
		return;
	}
	event_add(p->in_ev, NULL);
	hold(p, req, false);
}

void process_close_stdin(struct proc *p, struct evhttp_request *req)
{
	if (p->in_fd < 0 || p->in_closing) {
		reply_ok(req); /* envd: closing a closed (or disabled) stdin is fine */
		return;
	}
	if (evbuffer_get_length(p->in_queue) == 0) {
		close_input(p);
		reply_ok(req);
		return;
	}
	p->in_closing = true;
	hold(p, req, true);
}

int process_input_init(struct proc *p)
{
	p->in_queue = evbuffer_new();
	if (!p->in_queue)
		return -1;
	if (p->in_fd >= 0 &&
		!(p->in_ev = event_new(p->pm->base, p->in_fd, EV_WRITE | EV_PERSIST, on_input_writable, p)))
		return -1;
	return 0;
}

void process_input_end(struct proc *p)
{
	fail_waits(p, EPIPE);
	close_input(p);
}

void process_input_free(struct proc *p)
{
	process_input_end(p);
	if (p->in_queue)
		evbuffer_free(p->in_queue);
	p->in_queue = NULL;
}
