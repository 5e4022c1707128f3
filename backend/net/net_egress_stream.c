/* One side of an intercepted connection (net_egress_stream.h).
 *
 * All the work is in run(), called from the loop when the socket is
 * readable or writable, or when the owner added output or turned reading
 * back on (the kick event, activated without a syscall): socket -> input
 * (TLS: socket -> BIO pair -> SSL_read), output -> socket (TLS: SSL_write ->
 * BIO pair -> socket), then the callbacks, then the events it waits for. */
#define _GNU_SOURCE
#include "net/net_egress_stream.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#define RECORD_MAX 16384                     /* plaintext bytes of one TLS record */
#define RECORDS_OUT (4 * (RECORD_MAX + 256)) /* the pair's records towards the socket: four a write(2) */
#define STEP_BYTES (1 << 20)                 /* read per turn of the loop, so one stream cannot hold it */
#define INPUT_MAX (1 << 20)                  /* input the owner has not drained: no reading past it */

struct net_egress_stream {
	struct event_base *base;
	int fd;
	SSL *ssl; /* NULL: plain */
	BIO *net; /* TLS: the socket's side of the BIO pair whose other side is the SSL's */
	struct evbuffer *in, *out;
	struct event *readable, *writable, *kick, *idle;
	struct net_egress_stream_callbacks cb;
	size_t write_low;
	int idle_seconds;
	struct timeval last_moved;
	bool handshaking;
	bool reading; /* the owner wants bytes */
	bool ended;   /* the socket's read side ended (read(2) gave 0) */
	bool done;    /* EOF or ERROR was reported: nothing more is read */
	bool failed;  /* ERROR: nothing more is written either */
	bool blocked; /* the socket took less than was offered: wait until it is writable */
	bool *alive;  /* while run() runs: cleared when a callback freed the stream */
	unsigned long ssl_error;
};

static void fail_ssl(struct net_egress_stream *s)
{
	if (!s->ssl_error)
		s->ssl_error = ERR_peek_error();
}

/* socket -> input, plain: readv into the input's free space. 1 when the
 * socket may hold more, 0 when it is empty or ended, -1 when it failed. */
static int take_plain(struct net_egress_stream *s, size_t *budget)
{
	if (s->ended)
		return 0;
	struct evbuffer_iovec v[2];
	int n = evbuffer_reserve_space(s->in, NET_EGRESS_STREAM_CHUNK, v, 2);
	if (n < 1)
		return -1;
	/* It may offer more than asked: a read stays a chunk. */
	if (v[0].iov_len >= NET_EGRESS_STREAM_CHUNK) {
		v[0].iov_len = NET_EGRESS_STREAM_CHUNK;
		n = 1;
	} else if (n == 2 && v[0].iov_len + v[1].iov_len > NET_EGRESS_STREAM_CHUNK) {
		v[1].iov_len = NET_EGRESS_STREAM_CHUNK - v[0].iov_len;
	}
	ssize_t got;
	do
		got = readv(s->fd, (struct iovec *)v, n);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		evbuffer_commit_space(s->in, v, 0);
		if (got == 0)
			s->ended = true;
		return got == 0 || errno == EAGAIN ? 0 : -1;
	}
	size_t room = 0, left = (size_t)got;
	int used = 0;
	for (; used < n && left > 0; used++) {
		room += v[used].iov_len;
		if (v[used].iov_len > left)
			v[used].iov_len = left;
		left -= v[used].iov_len;
	}
	evbuffer_commit_space(s->in, v, used);
	*budget = (size_t)got >= *budget ? 0 : *budget - (size_t)got;
	return (size_t)got == room;
}

/* socket -> the pair, TLS: as take_plain. */
static int take_tls(struct net_egress_stream *s, size_t *budget)
{
	char *p;
	int room = s->ended ? 0 : BIO_nwrite0(s->net, &p);
	if (room <= 0)
		return 0; /* the pair is full: SSL_read empties it first */
	ssize_t got;
	do
		got = read(s->fd, p, (size_t)room);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		if (got == 0) {
			s->ended = true;
			BIO_shutdown_wr(s->net); /* SSL reads its records, then the end */
		}
		return got == 0 || errno == EAGAIN ? 0 : -1;
	}
	BIO_nwrite(s->net, &p, (int)got);
	*budget = (size_t)got >= *budget ? 0 : *budget - (size_t)got;
	return got == room;
}

/* The pair -> input: every whole record. 1 at the peer's TLS end, 0 when
 * more ciphertext is needed (or the input is full), -1 when TLS failed. */
static int decrypt(struct net_egress_stream *s)
{
	while (evbuffer_get_length(s->in) < INPUT_MAX) {
		struct evbuffer_iovec v;
		if (evbuffer_reserve_space(s->in, RECORD_MAX, &v, 1) < 1)
			return -1;
		ERR_clear_error();
		int n = SSL_read(s->ssl, v.iov_base, (int)v.iov_len);
		if (n > 0) {
			v.iov_len = (size_t)n;
			evbuffer_commit_space(s->in, &v, 1);
			continue;
		}
		evbuffer_commit_space(s->in, &v, 0);
		switch (SSL_get_error(s->ssl, n)) {
		case SSL_ERROR_WANT_READ:
		case SSL_ERROR_WANT_WRITE: /* the pair towards the socket is full: sent below */
			return 0;
		case SSL_ERROR_ZERO_RETURN: /* close_notify, or an end without it (allowed) */
			return 1;
		default:
			fail_ssl(s);
			return -1;
		}
	}
	return 0;
}

/* The pair's records -> socket. 0 when all went, 1 when the socket is
 * full, -1 when it failed. */
static int flush_records(struct net_egress_stream *s)
{
	char *p;
	int n;
	while ((n = BIO_nread0(s->net, &p)) > 0) {
		ssize_t w = send(s->fd, p, (size_t)n, MSG_NOSIGNAL);
		if (w > 0) {
			BIO_nread(s->net, &p, (int)w);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		return w < 0 && errno == EAGAIN ? 1 : -1;
	}
	return 0;
}

/* Output -> socket. 0 when all went, 1 when the socket is full, -1 when it failed. */
static int send_out(struct net_egress_stream *s)
{
	if (!s->ssl) {
		while (evbuffer_get_length(s->out) > 0) {
			int w = evbuffer_write_atmost(s->out, s->fd, -1);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 && errno == EAGAIN ? 1 : -1;
		}
		return 0;
	}
	for (;;) {
		int r = flush_records(s);
		if (r != 0 || s->handshaking || evbuffer_get_length(s->out) == 0)
			return r;
		/* Records into the pair until it is full or the output empty. */
		while (evbuffer_get_length(s->out) > 0) {
			struct evbuffer_iovec v;
			evbuffer_peek(s->out, -1, NULL, &v, 1);
			ERR_clear_error();
			int n = SSL_write(s->ssl, v.iov_base,
				(int)(v.iov_len < RECORDS_OUT ? v.iov_len : RECORDS_OUT));
			if (n > 0) {
				evbuffer_drain(s->out, (size_t)n);
				continue;
			}
			int e = SSL_get_error(s->ssl, n);
			if (e == SSL_ERROR_WANT_WRITE)
				break;
			if (e == SSL_ERROR_WANT_READ) /* the peer's records come first */
				return flush_records(s) < 0 ? -1 : 0;
			fail_ssl(s);
			return -1;
		}
	}
}

size_t net_egress_stream_unsent(const struct net_egress_stream *s)
{
	return evbuffer_get_length(s->out) + (s->ssl ? BIO_ctrl_pending(s->net) : 0);
}

/* What the stream waits for, from its state. */
static void rearm(struct net_egress_stream *s)
{
	bool want = !s->done && !s->ended &&
		(s->handshaking || (s->reading && evbuffer_get_length(s->in) < INPUT_MAX));
	if (want && s->ssl && BIO_ctrl_get_write_guarantee(s->net) == 0)
		want = false; /* the pair is full: SSL_read must empty it first */
	if (want)
		event_add(s->readable, NULL);
	else
		event_del(s->readable);
	if (s->blocked && !s->failed)
		event_add(s->writable, NULL);
	else
		event_del(s->writable);
	struct timeval idle = {s->idle_seconds, 0};
	if (s->idle_seconds > 0 && !s->done && (s->reading || s->handshaking) &&
		!evtimer_pending(s->idle, NULL))
		evtimer_add(s->idle, &idle);
}

static void run(struct net_egress_stream *s)
{
	bool alive = true;
	s->alive = &alive;
	size_t had = evbuffer_get_length(s->in), unsent = net_egress_stream_unsent(s), budget = STEP_BYTES;
	bool connected = false;
	enum net_egress_stream_event end = 0;

	/* Read while the owner wants bytes (or the handshake does). */
	while (!s->failed && !s->done && budget > 0 &&
		(s->handshaking || (s->reading && evbuffer_get_length(s->in) < INPUT_MAX))) {
		int more = s->ssl ? take_tls(s, &budget) : take_plain(s, &budget);
		if (more < 0) {
			end = NET_EGRESS_STREAM_ERROR;
			break;
		}
		if (s->ssl && s->handshaking) {
			ERR_clear_error();
			int r = SSL_do_handshake(s->ssl);
			if (r == 1) {
				s->handshaking = false;
				connected = true;
			} else if (SSL_get_error(s->ssl, r) != SSL_ERROR_WANT_READ &&
				SSL_get_error(s->ssl, r) != SSL_ERROR_WANT_WRITE) {
				fail_ssl(s);
				end = NET_EGRESS_STREAM_ERROR;
				break;
			}
		}
		if (s->ssl && !s->handshaking && s->reading) {
			int r = decrypt(s);
			if (r != 0) {
				end = r > 0 ? NET_EGRESS_STREAM_EOF : NET_EGRESS_STREAM_ERROR;
				break;
			}
		}
		if (s->ended && !s->ssl && s->reading) /* plain: the end comes after the bytes */
			end = NET_EGRESS_STREAM_EOF;
		if (s->ended && s->ssl && s->handshaking) {
			end = NET_EGRESS_STREAM_ERROR; /* the peer left mid-handshake */
			break;
		}
		if (!more || end)
			break;
	}
	if (!s->ended && budget == 0)
		event_active(s->kick, EV_READ, 0); /* more at the next turn: others go first */
	if (budget < STEP_BYTES)
		event_base_gettimeofday_cached(s->base, &s->last_moved);

	bool wrote = false;
	if (end != NET_EGRESS_STREAM_ERROR && !s->failed) {
		int r = send_out(s);
		s->blocked = r > 0;
		wrote = net_egress_stream_unsent(s) < unsent;
		if (r < 0)
			end = NET_EGRESS_STREAM_ERROR;
	}
	if (wrote)
		event_base_gettimeofday_cached(s->base, &s->last_moved);
	if (end == NET_EGRESS_STREAM_ERROR && !s->failed && s->ssl)
		flush_records(s); /* the alert that says why, if the socket takes it */
	if (end == NET_EGRESS_STREAM_ERROR)
		s->failed = true;
	if (end)
		s->done = true;

	/* The owner's turn: any callback may free s. */
	if (connected) {
		s->cb.on_event(s, NET_EGRESS_STREAM_CONNECTED, s->cb.ctx);
		if (!alive)
			return;
	}
	if (evbuffer_get_length(s->in) > had && s->cb.on_read) {
		s->cb.on_read(s, s->cb.ctx);
		if (!alive)
			return;
	}
	if (end) {
		s->cb.on_event(s, end, s->cb.ctx);
		if (!alive)
			return;
	}
	if (wrote && evbuffer_get_length(s->out) <= s->write_low &&
		(s->write_low > 0 || net_egress_stream_unsent(s) == 0) && s->cb.on_write) {
		s->cb.on_write(s, s->cb.ctx);
		if (!alive)
			return;
	}
	s->alive = NULL;
	rearm(s);
}

static void on_socket(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	run(arg);
}

static void on_idle(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct net_egress_stream *s = arg;
	if (s->done || !(s->reading || s->handshaking) || s->idle_seconds <= 0)
		return;
	struct timeval now, since;
	event_base_gettimeofday_cached(s->base, &now);
	timersub(&now, &s->last_moved, &since);
	if (since.tv_sec < s->idle_seconds) {
		struct timeval left = {s->idle_seconds, 0};
		timersub(&left, &since, &left);
		evtimer_add(s->idle, &left);
		return;
	}
	s->done = true;
	rearm(s);
	s->cb.on_event(s, NET_EGRESS_STREAM_TIMEOUT, s->cb.ctx);
}

/* The owner drained a full input: reading goes on from the loop. */
static void on_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct net_egress_stream *s = arg;
	if (info->orig_size >= INPUT_MAX && evbuffer_get_length(buf) < INPUT_MAX)
		event_active(s->kick, EV_READ, 0);
}

/* Output was added: sent from the loop (the owner may be inside a callback). */
static void on_output(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	(void)buf;
	struct net_egress_stream *s = arg;
	if (info->n_added > 0 && !s->failed)
		event_active(s->kick, EV_WRITE, 0);
}

struct net_egress_stream *net_egress_stream_new(struct event_base *base, int fd, SSL *ssl, bool server,
	const struct net_egress_stream_callbacks *cb)
{
	struct net_egress_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	*s = (struct net_egress_stream){.base = base, .fd = fd, .cb = *cb, .reading = true};
	s->in = evbuffer_new();
	s->out = evbuffer_new();
	s->readable = event_new(base, fd, EV_READ | EV_PERSIST, on_socket, s);
	s->writable = event_new(base, fd, EV_WRITE | EV_PERSIST, on_socket, s);
	s->kick = event_new(base, -1, 0, on_socket, s);
	s->idle = evtimer_new(base, on_idle, s);
	BIO *inner = NULL;
	if (!s->in || !s->out || !s->readable || !s->writable || !s->kick || !s->idle ||
		!evbuffer_add_cb(s->in, on_input, s) || !evbuffer_add_cb(s->out, on_output, s) ||
		(ssl && BIO_new_bio_pair(&inner, RECORDS_OUT, &s->net, NET_EGRESS_STREAM_CHUNK) != 1)) {
		s->fd = -1; /* still the caller's, as ssl is */
		net_egress_stream_free(s);
		return NULL;
	}
	if (ssl) {
		s->ssl = ssl;
		s->handshaking = true;
		SSL_set_bio(ssl, inner, inner);
		SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
		/* Many servers end without close_notify: an end all the same. */
		SSL_set_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
		if (server)
			SSL_set_accept_state(ssl);
		else
			SSL_set_connect_state(ssl);
	}
	event_base_gettimeofday_cached(base, &s->last_moved);
	event_active(s->kick, EV_WRITE, 0); /* a client's handshake starts by writing */
	return s;
}

void net_egress_stream_free(struct net_egress_stream *s)
{
	if (!s)
		return;
	if (s->alive)
		*s->alive = false;
	if (s->ssl && !s->handshaking && !s->failed && s->fd >= 0) {
		ERR_clear_error();
		if (SSL_shutdown(s->ssl) >= 0)
			flush_records(s); /* once, never waiting */
	}
	/* The buffers first: their callbacks use the kick. */
	if (s->in)
		evbuffer_free(s->in);
	if (s->out)
		evbuffer_free(s->out);
	if (s->readable)
		event_free(s->readable);
	if (s->writable)
		event_free(s->writable);
	if (s->kick)
		event_free(s->kick);
	if (s->idle)
		event_free(s->idle);
	SSL_free(s->ssl);
	BIO_free(s->net);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

struct evbuffer *net_egress_stream_input(struct net_egress_stream *s)
{
	return s->in;
}

struct evbuffer *net_egress_stream_output(struct net_egress_stream *s)
{
	return s->out;
}

void net_egress_stream_reading(struct net_egress_stream *s, bool on)
{
	if (s->reading == on)
		return;
	s->reading = on;
	if (on) {
		event_base_gettimeofday_cached(s->base, &s->last_moved);
		event_active(s->kick, EV_READ, 0); /* records already in the pair */
	} else if (!s->handshaking) {
		event_del(s->readable);
	}
}

void net_egress_stream_write_low(struct net_egress_stream *s, size_t low)
{
	s->write_low = low;
}

void net_egress_stream_idle(struct net_egress_stream *s, int seconds)
{
	s->idle_seconds = seconds;
	event_base_gettimeofday_cached(s->base, &s->last_moved);
	evtimer_del(s->idle);
	struct timeval idle = {seconds, 0};
	if (seconds > 0)
		evtimer_add(s->idle, &idle);
}

SSL *net_egress_stream_ssl(const struct net_egress_stream *s)
{
	return s->ssl;
}

unsigned long net_egress_stream_ssl_error(const struct net_egress_stream *s)
{
	return s->ssl_error;
}
