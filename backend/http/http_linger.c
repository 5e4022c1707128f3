/* Lingering close (http_linger.h): read into nothing, then close. */
#include "http/http_linger.h"

#include "lib/clock.h"

#include <errno.h>
#include <event2/event.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <unistd.h>

#define READS_PER_TURN 16 /* of READ_PIECE each: other clients come first */
#define READ_PIECE (64 * 1024)

struct lingering {
	TAILQ_ENTRY(lingering) link;
	struct http_linger *owner;
	struct event *ev;
	evutil_socket_t fd;
	size_t dropped;
	int64_t until_ms; /* the whole lingering time */
};

struct http_linger {
	struct event_base *base;
	TAILQ_HEAD(, lingering) sockets; /* oldest first */
	size_t count;
};

static void finish(struct lingering *s)
{
	TAILQ_REMOVE(&s->owner->sockets, s, link);
	s->owner->count--;
	event_free(s->ev);
	close(s->fd);
	free(s);
}

static void on_event(evutil_socket_t fd, short what, void *arg)
{
	struct lingering *s = arg;
	if ((what & EV_TIMEOUT) || clock_monotonic_ms() >= s->until_ms) {
		finish(s);
		return;
	}
	static char sink[READ_PIECE];
	for (int i = 0; i < READS_PER_TURN; i++) {
		ssize_t n = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
		if (n > 0) {
			s->dropped += (size_t)n;
			if (s->dropped < HTTP_LINGER_BYTES)
				continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			return;
		}
		finish(s); /* closed by the client, an error, or enough */
		return;
	}
}

struct http_linger *http_linger_new(struct event_base *base)
{
	struct http_linger *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->base = base;
	TAILQ_INIT(&l->sockets);
	return l;
}

void http_linger_free(struct http_linger *l)
{
	if (!l)
		return;
	while (!TAILQ_EMPTY(&l->sockets))
		finish(TAILQ_FIRST(&l->sockets));
	free(l);
}

bool http_linger_take(struct http_linger *l, evutil_socket_t fd)
{
	/* Full: the oldest goes, its client has had the longest to read its
	 * answer (refusing the new one would reset it at once). */
	if (l->count >= HTTP_LINGER_MAX)
		finish(TAILQ_FIRST(&l->sockets));
	struct lingering *s = calloc(1, sizeof *s);
	if (s)
		s->ev = event_new(l->base, fd, EV_READ | EV_PERSIST, on_event, s);
	if (!s || !s->ev) {
		free(s);
		close(fd);
		return false;
	}
	/* The lowest priority the base has: dropping bytes waits for real work. */
	int priorities = event_base_get_npriorities(l->base);
	if (priorities > 1)
		event_priority_set(s->ev, priorities - 1);
	s->owner = l;
	s->fd = fd;
	s->until_ms = clock_monotonic_ms() + HTTP_LINGER_MS;
	/* With EV_PERSIST the timeout restarts on every read: it bounds
	 * silence; until_ms bounds a client that trickles. */
	struct timeval idle = {HTTP_LINGER_MS / 1000, (HTTP_LINGER_MS % 1000) * 1000};
	event_add(s->ev, &idle);
	TAILQ_INSERT_TAIL(&l->sockets, s, link);
	l->count++;
	return true;
}

size_t http_linger_count(const struct http_linger *l)
{
	return l->count;
}
