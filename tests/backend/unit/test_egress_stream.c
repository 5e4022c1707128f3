/* net/net_egress_stream.c over real TCP on loopback, as the proxy's side
 * towards a sandbox: TLS (a leaf from an in-memory egress CA) and plain. A
 * peer thread with blocking I/O sends 24 MiB in writes of many sizes (a
 * byte, a record and one more, 200 KB) while the loop echoes them back:
 * every byte comes back in order, and the peer's end (close_notify, or a
 * TCP end) is passed on after the echo. Input stops at its bound until the
 * owner drains it, then reading goes on; a side with nothing moving ends
 * with TIMEOUT after its idle time, not before; a peer that speaks no TLS
 * ends the handshake with ERROR and an OpenSSL error. */
#define _GNU_SOURCE
#include "check.h"
#include "egress/egress_ca.h"
#include "lib/err.h"
#include "loopback.h"
#include "net/net_egress_stream.h"
#include "suites.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ECHO_BYTES (24u << 20)
#define WINDOW (1u << 20)      /* the peer's bytes in flight before it reads */
#define BOUND_BYTES (6u << 20) /* sent while the owner does not drain */
#define INPUT_BOUND (1u << 20) /* net_egress_stream.c's INPUT_MAX */

static const size_t sizes[] = {1, 7, 100, 16383, 16384, 16385, 65536, 200000, 3, 40000};

static struct egress_ca *ca;

/* The peer's end of a connection: TLS when ssl is set. */
struct peer {
	int fd;
	SSL *ssl;
	uint64_t sent, got;
	bool intact, ended, handshake_ok;
};

static ssize_t peer_write(struct peer *p, const void *buf, size_t n)
{
	return p->ssl ? SSL_write(p->ssl, buf, (int)n) : write(p->fd, buf, n);
}

static ssize_t peer_read(struct peer *p, void *buf, size_t n)
{
	return p->ssl ? SSL_read(p->ssl, buf, (int)n) : read(p->fd, buf, n);
}

/* Reads what came back; false at the end (or an error). */
static bool peer_take(struct peer *p)
{
	static uint8_t buf[65536];
	ssize_t r = peer_read(p, buf, sizeof buf);
	if (r <= 0)
		return false;
	for (ssize_t i = 0; i < r; i++)
		p->intact &= buf[i] == pattern(p->got + (uint64_t)i);
	p->got += (uint64_t)r;
	return true;
}

static SSL *peer_tls(int fd)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;
	SSL_CTX_free(ctx); /* the SSL keeps its own reference */
	if (!ssl)
		return NULL;
	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, "stream.test");
	if (SSL_connect(ssl) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

/* The peer's TLS handshake, from its thread (the stream's needs the loop). */
static void *tls_peer(void *arg)
{
	struct peer *p = arg;
	p->ssl = peer_tls(p->fd);
	return NULL;
}

/* Sends ECHO_BYTES, never more than WINDOW ahead of what came back, ends,
 * then reads the rest of the echo to the end. */
static void *echo_peer(void *arg)
{
	struct peer *p = arg;
	static uint8_t buf[200000];
	p->intact = true;
	for (size_t k = 0; p->sent < ECHO_BYTES; k++) {
		size_t n = sizes[k % (sizeof sizes / sizeof sizes[0])];
		if (n > ECHO_BYTES - p->sent)
			n = (size_t)(ECHO_BYTES - p->sent);
		for (size_t i = 0; i < n; i++)
			buf[i] = pattern(p->sent + i);
		if (peer_write(p, buf, n) != (ssize_t)n)
			break;
		p->sent += n;
		while (p->sent - p->got > WINDOW && peer_take(p))
			;
	}
	if (p->ssl)
		SSL_shutdown(p->ssl); /* close_notify */
	else
		shutdown(p->fd, SHUT_WR);
	while (peer_take(p))
		;
	p->ended = true;
	return NULL;
}

/* The loop's owner of the stream. */
struct owner {
	struct event_base *base;
	struct net_egress_stream *s;
	bool drain, discard, ended; /* discard: drained bytes are dropped, not echoed */
	int connected, eofs, errors, timeouts;
	size_t most_input; /* the most the input held undrained */
	uint64_t taken;
	unsigned long ssl_error;
};

static void done(struct owner *o)
{
	net_egress_stream_free(o->s);
	o->s = NULL;
	event_base_loopbreak(o->base);
}

static void on_read(struct net_egress_stream *s, void *arg)
{
	struct owner *o = arg;
	struct evbuffer *in = net_egress_stream_input(s);
	if (evbuffer_get_length(in) > o->most_input)
		o->most_input = evbuffer_get_length(in);
	if (!o->drain)
		return;
	o->taken += evbuffer_get_length(in);
	if (o->discard)
		evbuffer_drain(in, evbuffer_get_length(in));
	else
		evbuffer_add_buffer(net_egress_stream_output(s), in);
}

static void on_write(struct net_egress_stream *s, void *arg)
{
	struct owner *o = arg;
	if (o->ended && net_egress_stream_unsent(s) == 0)
		done(o);
}

static void on_event(struct net_egress_stream *s, enum net_egress_stream_event what, void *arg)
{
	struct owner *o = arg;
	if (what == NET_EGRESS_STREAM_CONNECTED) {
		o->connected++;
		return;
	}
	o->eofs += what == NET_EGRESS_STREAM_EOF;
	o->errors += what == NET_EGRESS_STREAM_ERROR;
	o->timeouts += what == NET_EGRESS_STREAM_TIMEOUT;
	o->ssl_error = net_egress_stream_ssl_error(s);
	o->ended = true;
	if (what != NET_EGRESS_STREAM_EOF || net_egress_stream_unsent(s) == 0)
		done(o); /* an EOF waits for the echo to leave */
}

/* The proxy's server end of a new connection, and the peer's socket. */
static struct net_egress_stream *side(struct owner *o, bool tls, int *peer_fd)
{
	int stream_fd = -1;
	if (tcp_pair(peer_fd, &stream_fd) != 0)
		return NULL;
	nonblocking(stream_fd);
	SSL *ssl = NULL;
	if (tls) {
		SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
		X509 *cert;
		EVP_PKEY *key;
		ssl = ctx ? SSL_new(ctx) : NULL;
		SSL_CTX_free(ctx);
		if (!ssl || egress_ca_leaf(ca, "stream.test", &cert, &key) != 0 ||
			SSL_use_certificate(ssl, cert) != 1 || SSL_use_PrivateKey(ssl, key) != 1)
			return NULL;
	}
	const struct net_egress_stream_callbacks cb = {on_read, on_write, on_event, o};
	return net_egress_stream_new(o->base, stream_fd, ssl, true, &cb);
}

static void echo(bool tls)
{
	struct owner o = {.base = event_base_new(), .drain = true};
	struct peer p = {0};
	o.s = side(&o, tls, &p.fd);
	CHECK(o.s != NULL);
	pthread_t t;
	if (tls) {
		struct timeval tick = {0, 1000};
		pthread_create(&t, NULL, tls_peer, &p);
		while (o.connected == 0 && o.s) {
			event_base_loopexit(o.base, &tick);
			event_base_dispatch(o.base);
		}
		pthread_join(t, NULL);
		CHECK(p.ssl != NULL);
	}
	pthread_create(&t, NULL, echo_peer, &p);
	event_base_dispatch(o.base);
	pthread_join(t, NULL);
	CHECK(o.connected == (tls ? 1 : 0));
	CHECK(o.eofs == 1 && o.errors == 0 && o.timeouts == 0);
	CHECK(o.taken == ECHO_BYTES);
	CHECK(p.sent == ECHO_BYTES && p.got == ECHO_BYTES && p.intact && p.ended);
	CHECK(o.most_input <= INPUT_BOUND + (64u << 10));
	net_egress_stream_free(o.s); /* NULL once done */
	SSL_free(p.ssl);
	close(p.fd);
	event_base_free(o.base);
}

/* Sends BOUND_BYTES, ends, and reads to the end. */
static void *bound_peer(void *arg)
{
	struct peer *p = arg;
	static uint8_t buf[65536];
	while (p->sent < BOUND_BYTES) {
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = pattern(p->sent + i);
		if (write(p->fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			break;
		p->sent += sizeof buf;
	}
	shutdown(p->fd, SHUT_WR);
	while (peer_take(p))
		;
	return NULL;
}

static void start_draining(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct owner *o = arg;
	o->drain = true;
	struct evbuffer *in = net_egress_stream_input(o->s);
	o->taken += evbuffer_get_length(in);
	evbuffer_drain(in, evbuffer_get_length(in));
}

/* The owner drains nothing for 300 ms: the input holds about its bound
 * (not the 6 MiB the peer sent), and once drained (dropped: nothing is
 * sent that would wake the stream) the rest comes. */
static void bound(void)
{
	struct owner o = {.base = event_base_new(), .discard = true};
	struct peer p = {.intact = true};
	o.s = side(&o, false, &p.fd);
	CHECK(o.s != NULL);
	struct event *later = evtimer_new(o.base, start_draining, &o);
	struct timeval wait = {0, 300000};
	evtimer_add(later, &wait);
	pthread_t t;
	pthread_create(&t, NULL, bound_peer, &p);
	event_base_dispatch(o.base);
	shutdown(p.fd, SHUT_RDWR); /* a peer still blocked writing (reading never went on) fails, not hangs */
	pthread_join(t, NULL);
	CHECK(o.most_input >= INPUT_BOUND && o.most_input <= INPUT_BOUND + (64u << 10));
	CHECK(o.taken == BOUND_BYTES && p.got == 0);
	CHECK(o.eofs == 1 && o.errors == 0);
	event_free(later);
	net_egress_stream_free(o.s);
	close(p.fd);
	event_base_free(o.base);
}

/* A TLS peer that completes its handshake and then says nothing. */
static void idle(void)
{
	struct owner o = {.base = event_base_new(), .drain = true};
	struct peer p = {0};
	o.s = side(&o, true, &p.fd);
	CHECK(o.s != NULL);
	net_egress_stream_idle(o.s, 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_t t;
	pthread_create(&t, NULL, tls_peer, &p);
	event_base_dispatch(o.base);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(p.ssl != NULL && o.connected == 1);
	CHECK(o.timeouts == 1 && o.errors == 0 && o.eofs == 0);
	CHECK(waited >= 0.9 && waited < 5);
	SSL_free(p.ssl);
	close(p.fd);
	event_base_free(o.base);
}

/* Plain HTTP to the TLS side: the handshake fails, with OpenSSL's reason. */
static void not_tls(void)
{
	struct owner o = {.base = event_base_new(), .drain = true};
	int peer_fd = -1;
	o.s = side(&o, true, &peer_fd);
	CHECK(o.s != NULL);
	const char *req = "GET / HTTP/1.1\r\nHost: stream.test\r\n\r\n";
	CHECK(write(peer_fd, req, strlen(req)) == (ssize_t)strlen(req));
	event_base_dispatch(o.base);
	CHECK(o.errors == 1 && o.connected == 0 && o.ssl_error != 0);
	close(peer_fd);
	event_base_free(o.base);
}

void suite_egress_stream(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the backend */
	struct err why;
	ca = egress_ca_open(NULL, &why);
	CHECK(ca != NULL);
	if (!ca)
		return;
	echo(true);
	echo(false);
	bound();
	idle();
	not_tls();
	egress_ca_free(ca);
}
