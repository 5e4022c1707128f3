/* A passed-on connection's relay through two pipes (net_egress_splice.h).
 *
 * Each direction moves from -> pipe -> to. Its source is watched while its
 * pipe is empty, its destination while the pipe holds bytes the destination
 * would not take: level-triggered, so a wakeup that leaves bytes in a
 * socket (the per-wakeup budget) comes back at the next turn of the loop. */
#define _GNU_SOURCE
#include "net/net_egress_splice.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define PIPE_BYTES (1 << 20) /* asked of each pipe: its slots bound what one splice moves */
#define STEP_BYTES (4 << 20) /* per wakeup and direction, so one connection cannot hold the loop */

struct direction {
	struct net_egress_splice *s;
	int from, to;
	int pipe[2];
	size_t room;   /* the pipe's size */
	size_t queued; /* bytes in the pipe */
	bool ended;    /* from's end was read */
	bool shut;     /* and passed on: to is shut for writing */
	struct event *readable, *writable;
};

struct net_egress_splice {
	struct event_base *base;
	int client, upstream;
	struct direction dir[2]; /* client -> upstream, upstream -> client */
	struct event *idle;
	int idle_seconds;
	struct timeval last_move;
	net_egress_splice_done_fn done;
	void *ctx;
};

static void finish(struct net_egress_splice *s)
{
	/* Stop every event first: the caller frees s from inside done. */
	for (int i = 0; i < 2; i++) {
		event_del(s->dir[i].readable);
		event_del(s->dir[i].writable);
	}
	event_del(s->idle);
	s->done(s->ctx);
}

/* Moves what it can out of the pipe, adding it to *moved; -1 when to failed. */
static int drain(struct direction *d, size_t *moved)
{
	while (d->queued > 0) {
		ssize_t n =
			splice(d->pipe[0], NULL, d->to, NULL, d->queued, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			d->queued -= (size_t)n;
			*moved += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN ? 0 : -1;
	}
	return 0;
}

/* Moves bytes from -> to until from is empty, to is full or the budget is
 * spent; then watches what it waits for. -1 when a socket failed. */
static int pump(struct direction *d)
{
	size_t moved = 0;
	if (drain(d, &moved) != 0)
		return -1;
	while (!d->ended && d->queued == 0 && moved < STEP_BYTES) {
		ssize_t n =
			splice(d->from, NULL, d->pipe[1], NULL, d->room, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			d->queued = (size_t)n;
			if (drain(d, &moved) != 0)
				return -1;
		} else if (n == 0) {
			d->ended = true;
		} else if (errno == EAGAIN) {
			break;
		} else if (errno != EINTR) {
			return -1;
		}
	}
	if (moved)
		event_base_gettimeofday_cached(d->s->base, &d->s->last_move);
	if (d->ended && d->queued == 0 && !d->shut) {
		shutdown(d->to, SHUT_WR);
		d->shut = true;
	}
	/* Budget spent with from still readable: its event stays, and fires
	 * again at the loop's next turn. */
	if (d->ended || d->queued > 0)
		event_del(d->readable);
	else
		event_add(d->readable, NULL);
	if (d->queued > 0)
		event_add(d->writable, NULL);
	else
		event_del(d->writable);
	return 0;
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct direction *d = arg;
	struct net_egress_splice *s = d->s;
	if (pump(d) != 0 || (s->dir[0].shut && s->dir[1].shut))
		finish(s);
}

static void on_idle(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct net_egress_splice *s = arg;
	struct timeval now, since;
	event_base_gettimeofday_cached(s->base, &now);
	timersub(&now, &s->last_move, &since);
	if (since.tv_sec >= s->idle_seconds) {
		finish(s);
		return;
	}
	struct timeval left = {s->idle_seconds, 0};
	timersub(&left, &since, &left);
	event_add(s->idle, &left);
}

static int direction_init(struct net_egress_splice *s, struct direction *d, int from, int to)
{
	*d = (struct direction){.s = s, .from = from, .to = to, .pipe = {-1, -1}};
	if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	/* The default 16 slots hold far less than 64 KiB of small segments. */
	int size = fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
	if (size < 0)
		size = fcntl(d->pipe[1], F_GETPIPE_SZ);
	d->room = size > 0 ? (size_t)size : 65536;
	d->readable = event_new(s->base, from, EV_READ | EV_PERSIST, on_ready, d);
	d->writable = event_new(s->base, to, EV_WRITE | EV_PERSIST, on_ready, d);
	return d->readable && d->writable ? 0 : -1;
}

static void direction_free(struct direction *d)
{
	if (d->readable)
		event_free(d->readable);
	if (d->writable)
		event_free(d->writable);
	for (int i = 0; i < 2; i++)
		if (d->pipe[i] >= 0)
			close(d->pipe[i]);
}

struct net_egress_splice *net_egress_splice_new(struct event_base *base, int client, int upstream,
	const unsigned char *early, size_t early_len, int idle_seconds, net_egress_splice_done_fn done,
	void *ctx)
{
	struct net_egress_splice *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	*s = (struct net_egress_splice){.base = base,
		.client = -1,
		.upstream = -1,
		.idle_seconds = idle_seconds,
		.done = done,
		.ctx = ctx};
	s->dir[0].pipe[0] = s->dir[0].pipe[1] = s->dir[1].pipe[0] = s->dir[1].pipe[1] = -1;
	struct direction *down = &s->dir[1];
	if (direction_init(s, &s->dir[0], client, upstream) != 0 ||
		direction_init(s, down, upstream, client) != 0 ||
		!(s->idle = evtimer_new(base, on_idle, s)) ||
		(early_len && write(down->pipe[1], early, early_len) != (ssize_t)early_len)) {
		net_egress_splice_free(s);
		return NULL;
	}
	down->queued = early_len;
	s->client = client;
	s->upstream = upstream;
	event_base_gettimeofday_cached(base, &s->last_move);
	event_add(s->idle, &(struct timeval){idle_seconds, 0});
	event_add(s->dir[0].readable, NULL);
	if (down->queued)
		event_add(down->writable, NULL);
	else
		event_add(down->readable, NULL);
	return s;
}

void net_egress_splice_free(struct net_egress_splice *s)
{
	if (!s)
		return;
	direction_free(&s->dir[0]);
	direction_free(&s->dir[1]);
	if (s->idle)
		event_free(s->idle);
	if (s->client >= 0)
		close(s->client);
	if (s->upstream >= 0)
		close(s->upstream);
	free(s);
}
