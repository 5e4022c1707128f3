/* Dialing through the egress proxy's SOCKS5 tunnel (net_egress_tunnel.h). */
#define _GNU_SOURCE
#include "net/net_egress_tunnel.h"

#include "egress/egress_socks.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "net/net_egress_admit.h"
#include "net/net_egress_conn.h"
#include "net/net_policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ANSWER_MAX 512 /* read at once: the handshake's answers, and maybe the destination's first bytes */

struct net_egress_dial {
	struct net_egress_env *env;
	struct net_egress_lookup *lookup; /* of the proxy's name */
	struct event *ev;                 /* connect, then each answer; and the deadline */
	int fd;
	int connect_err; /* a connect that failed at once */
	struct egress_socks socks;
	int64_t until_ms; /* the whole dial's end (monotonic): a proxy
	                                   * answering a byte at a time does not extend it */
	net_egress_dialed done;
	void *ctx;
};

static void dial_free(struct net_egress_dial *d)
{
	net_egress_lookup_cancel(d->lookup);
	if (d->ev)
		event_free(d->ev);
	if (d->fd >= 0)
		close(d->fd);
	egress_socks_clear(&d->socks);
	free(d);
}

/* The end: done gets the socket (why NULL), or why with its context; d goes. */
static void finish(struct net_egress_dial *d, const unsigned char *early, size_t n, struct err *why)
{
	int fd = why ? -1 : d->fd;
	if (why)
		err_wrap(why, "through the egress proxy");
	else
		d->fd = -1;
	unsigned char rest[ANSWER_MAX];
	if (n)
		memcpy(rest, early, n);
	net_egress_dialed done = d->done;
	void *ctx = d->ctx;
	dial_free(d);
	done(ctx, fd, rest, n, why);
}

/* finish, failed for the reason fmt says. */
static void failed(struct net_egress_dial *d, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void failed(struct net_egress_dial *d, int status, const char *fmt, ...)
{
	struct err why;
	va_list ap;
	va_start(ap, fmt);
	err_setv(&why, status, fmt, ap);
	va_end(ap);
	finish(d, NULL, 0, &why);
}

/* Waits for d->ev (the connect, then each answer) within the dial's time;
 * with none left, its callback runs at once as timed out. */
static int wait_in_time(struct net_egress_dial *d)
{
	int64_t left = d->until_ms - clock_monotonic_ms();
	if (left > 0)
		return event_add(d->ev, &(struct timeval){left / 1000, (left % 1000) * 1000});
	event_active(d->ev, EV_TIMEOUT, 0);
	return 0;
}

static int send_all(int fd, const unsigned char *b, size_t n)
{
	/* Small messages on a fresh socket: the send buffer takes them whole. */
	return send(fd, b, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

static void on_answer(evutil_socket_t fd, short what, void *arg)
{
	struct net_egress_dial *d = arg;
	if (what & EV_TIMEOUT) {
		failed(d, ETIMEDOUT, "no answer in time");
		return;
	}
	unsigned char buf[ANSWER_MAX];
	ssize_t n = recv(fd, buf, sizeof buf, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		wait_in_time(d);
		return;
	}
	if (n <= 0) {
		failed(d, n == 0 ? 0 : errno, "%s",
			n == 0 ? "the proxy closed the connection" : strerror(errno));
		return;
	}
	size_t at = 0;
	struct err why;
	while (at < (size_t)n) {
		size_t used = 0;
		enum egress_socks_status st =
			egress_socks_feed(&d->socks, buf + at, (size_t)n - at, &used, &why);
		at += used;
		if (st == EGRESS_SOCKS_SEND && send_all(fd, d->socks.out, d->socks.out_len) != 0) {
			failed(d, errno, "%s", strerror(errno));
			return;
		}
		if (st == EGRESS_SOCKS_OPEN) {
			finish(d, buf + at, (size_t)n - at, NULL);
			return;
		}
		if (st == EGRESS_SOCKS_FAILED) {
			finish(d, NULL, 0, &why);
			return;
		}
		if (st == EGRESS_SOCKS_MORE)
			break;
	}
	wait_in_time(d);
}

static void on_connected(evutil_socket_t fd, short what, void *arg)
{
	struct net_egress_dial *d = arg;
	int err = 0;
	socklen_t len = sizeof err;
	if (d->connect_err)
		err = d->connect_err;
	else if (what & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	if (err) {
		failed(d, err, "%s", strerror(err));
		return;
	}
	event_free(d->ev);
	d->ev = event_new(d->env->base, fd, EV_READ, on_answer, d);
	if (!d->ev || wait_in_time(d) != 0 || send_all(fd, d->socks.out, d->socks.out_len) != 0)
		failed(d, d->ev ? errno : ENOMEM, "%s", d->ev ? strerror(errno) : "out of memory");
}

static void connect_to(struct net_egress_dial *d, const struct sockaddr_in *proxy)
{
	d->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (d->fd < 0 || setsockopt(d->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
		(connect(d->fd, (const struct sockaddr *)proxy, sizeof *proxy) != 0 &&
			errno != EINPROGRESS)) {
		/* Reported from the loop, as every other end. */
		d->connect_err = errno ? errno : EIO;
		d->ev = evtimer_new(d->env->base, on_connected, d);
		if (d->ev)
			event_active(d->ev, EV_TIMEOUT, 0);
		return;
	}
	d->ev = event_new(d->env->base, d->fd, EV_WRITE, on_connected, d);
	if (d->ev)
		wait_in_time(d);
}

static void on_proxy_resolved(void *ctx, const struct sockaddr_in *to, const struct err *why)
{
	struct net_egress_dial *d = ctx;
	d->lookup = NULL;
	if (!to) {
		failed(d, why->status, "%s", why->msg);
		return;
	}
	connect_to(d, to);
	if (!d->ev)
		failed(d, ENOMEM, "out of memory");
}

struct net_egress_dial *net_egress_tunnel_dial(struct net_egress_env *env, const char *name,
	const struct sockaddr_in *dst, net_egress_dialed done, void *ctx, struct err *err)
{
	const struct net_tunnel *t = &env->policy->tunnel;
	struct net_egress_dial *d = calloc(1, sizeof *d);
	if (!d) {
		err_set(err, 0, "out of memory");
		return NULL;
	}
	d->env = env;
	d->fd = -1;
	d->done = done;
	d->ctx = ctx;
	d->until_ms = clock_monotonic_ms() + NET_EGRESS_TUNNEL_SECONDS * 1000;
	if (egress_socks_start(&d->socks, t->user, t->pass, name, ntohl(dst->sin_addr.s_addr),
		    ntohs(dst->sin_port), err) != EGRESS_SOCKS_SEND) {
		err_wrap(err, "through the egress proxy");
		dial_free(d);
		return NULL;
	}
	struct sockaddr_in proxy = {.sin_family = AF_INET, .sin_port = htons(t->port)};
	if (inet_pton(AF_INET, t->host, &proxy.sin_addr) == 1) {
		connect_to(d, &proxy);
		if (!d->ev) {
			err_set(err, 0, "out of memory");
			dial_free(d);
			return NULL;
		}
		return d;
	}
	/* A name is resolved at each dial: the proxy may move. */
	d->lookup = net_egress_lookup(env, t->host, &proxy, false, on_proxy_resolved, d, err);
	if (!d->lookup) {
		dial_free(d);
		return NULL;
	}
	return d;
}

void net_egress_tunnel_cancel(struct net_egress_dial *d)
{
	if (d)
		dial_free(d);
}
