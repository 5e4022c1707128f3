/* Connections of a sandbox's egress proxy (net_egress_conn.h).
 *
 * A connection is peeked until its ClientHello (port 80: its request head)
 * is whole (SO_RCVLOWAT keeps the socket quiet until more bytes than were
 * peeked have come), admitted (net_egress_admit.h), then its upstream
 * socket is made in the sandbox's namespace and connected to the address
 * the sandbox asked for (SO_ORIGINAL_DST) or the one its name was resolved
 * to. Passed on: the kernel moves the bytes both ways
 * (net_egress_splice.h). Intercepted: the sandbox's side is a
 * TLS server with a leaf for its server name, the destination's a TLS
 * client verifying that name (port 80: plain both sides, every request's
 * Host that of the first), each a net_egress_stream; requests go through
 * egress_http, which sets the rule's headers, and answers come back
 * unchanged. */
#define _GNU_SOURCE
#include "net/net_egress_conn.h"

#include "egress/egress_host.h"
#include "egress/egress_http.h"
#include "egress/egress_sni.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "net/net_egress_admit.h"
#include "net/net_egress_fill.h"
#include "net/net_egress_splice.h"
#include "net/net_egress_stream.h"
#include "net/net_egress_tls.h"
#include "net/net_egress_tunnel.h"
#include "net/net_policy.h"
#include "net/net_rules.h"
#include "runtime/runtime_enter.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PEEK_SECONDS 10      /* for the ClientHello */
#define CONNECT_SECONDS 10   /* for the destination, TLS included */
#define IDLE_SECONDS 300     /* with nothing read either way */
#define FLUSH_SECONDS 5      /* for what is left to write once one side ended */
#define MAX_QUEUED (1 << 20) /* bytes queued towards one side before the other is paused */

struct net_egress_conn {
	struct net_egress_env *env;
	struct net_egress_conn *prev, *next;
	int cfd, ufd;                                /* until a stream or the relay owns them */
	struct event *ev;                            /* the peek, the connect, the last flush */
	struct net_egress_stream *client, *upstream; /* intercepted */
	struct net_egress_splice *relay;             /* passed on */
	struct sockaddr_in dst;
	char sni[256];         /* the server name (port 80: the Host's) */
	bool plain;            /* port 80: HTTP, without TLS either side */
	int64_t peek_until_ms; /* the end of the wait for a whole ClientHello or head
	                               * (monotonic): a sandbox sending a byte at a time
	                               * does not extend it */
	bool intercept, upstream_ready, finishing;
	struct net_egress_lookup *lookup; /* while its name is being resolved */
	struct net_egress_dial *dial;     /* while its tunnel is being opened (egressProxy) */
	bool by_name;                     /* the tunnel CONNECTs to sni, not to dst */
	char *failure; /* why the destination cannot be had: answered to the next request */
	struct egress_http *http;
	struct egress_header *headers; /* this request's, resolved */
	char **values;                 /* theirs, owned: they may hold a secret */
	size_t n_headers;
};

static void clear_headers(struct net_egress_conn *c)
{
	for (size_t i = 0; i < c->n_headers; i++) {
		explicit_bzero(c->values[i], strlen(c->values[i]));
		free(c->values[i]);
	}
	c->n_headers = 0;
}

static void conn_free(struct net_egress_conn *c)
{
	struct net_egress_env *env = c->env;
	if (c->prev)
		c->prev->next = c->next;
	else
		env->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	env->n_conns--;
	net_egress_lookup_cancel(c->lookup);
	net_egress_tunnel_cancel(c->dial);
	if (c->ev)
		event_free(c->ev);
	if (c->client)
		net_egress_stream_free(c->client);
	else if (c->cfd >= 0)
		close(c->cfd);
	if (c->upstream)
		net_egress_stream_free(c->upstream);
	else if (c->ufd >= 0)
		close(c->ufd);
	net_egress_splice_free(c->relay);
	egress_http_free(c->http);
	free(c->failure);
	clear_headers(c);
	free(c->headers);
	free(c->values);
	free(c);
}

static bool flushed(const struct net_egress_conn *c)
{
	return (!c->client || net_egress_stream_unsent(c->client) == 0) &&
		(!c->upstream || net_egress_stream_unsent(c->upstream) == 0);
}

static void on_flush_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_free(arg);
}

/* One side ended: what is queued for the other still goes, then both
 * close. The sandbox's side is still read (and what comes dropped), so
 * that a request it is still sending does not turn the close into a reset
 * that would lose the answer. */
static void finish(struct net_egress_conn *c)
{
	if (c->upstream)
		net_egress_stream_reading(c->upstream, false);
	if (flushed(c)) {
		conn_free(c);
		return;
	}
	if (c->finishing)
		return;
	c->finishing = true;
	if (c->ev)
		event_free(c->ev);
	struct timeval tv = {FLUSH_SECONDS, 0};
	c->ev = evtimer_new(c->env->base, on_flush_timeout, c);
	if (!c->ev || evtimer_add(c->ev, &tv) != 0)
		conn_free(c);
}

/* An answer of the proxy's own to the sandbox (intercepted only), then the end. */
static void answer(struct net_egress_conn *c, int status, const char *reason, const char *text)
{
	fprintf(stderr, "egress proxy: %s (%s): %d %s\n", c->sni, reason, status, text);
	evbuffer_add_printf(net_egress_stream_output(c->client),
		"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
		"Content-Length: %zu\r\n\r\ne2b-local-backend egress proxy: %s\n",
		status, reason, strlen(text) + strlen("e2b-local-backend egress proxy: \n"), text);
	finish(c);
}

/* Passed through: the sandbox's connection ends as the destination's did.
 * Intercepted: its next request (or the one already waiting) is answered
 * 502 with why. */
static void fail_upstream(struct net_egress_conn *c, const char *why)
{
	if (!c->intercept || !c->client || c->failure) {
		conn_free(c);
		return;
	}
	if (asprintf(&c->failure, "cannot reach %s: %s", c->sni, why) < 0) {
		c->failure = NULL;
		conn_free(c);
		return;
	}
	if (evbuffer_get_length(net_egress_stream_input(c->client)) > 0)
		answer(c, 502, "Bad Gateway", c->failure);
}

/* --- the rule's headers, per request ---------------------------------------- */

static int request_headers(void *ctx, const char *host, const struct egress_header **headers, size_t *n,
	struct err *err)
{
	/* The rule is the connection's name: the one its TLS was made for, or
	 * on port 80 the first request's Host, which every later request on the
	 * connection must name too (its upstream is that name's server). */
	struct net_egress_conn *c = ctx;
	clear_headers(c);
	*headers = NULL;
	*n = 0;
	char name[256];
	if (c->plain && (!host || !egress_host_name(host, name, sizeof name) || strcmp(name, c->sni) != 0))
		return err_set(err, 0, "a request for another host than %s on its connection", c->sni);
	const struct net_rule_set *set = net_rules_match(&c->env->policy->rules, c->sni);
	if (!set || set->n_headers == 0)
		return 0;
	struct egress_header *h = realloc(c->headers, set->n_headers * sizeof *h);
	if (h)
		c->headers = h;
	char **values = h ? realloc(c->values, set->n_headers * sizeof *values) : NULL;
	if (!values)
		return err_set(err, 0, "out of memory");
	c->values = values;
	for (size_t i = 0; i < set->n_headers; i++) {
		char *value = net_egress_fill(c->env, set->headers[i].value, err);
		if (!value)
			return -1;
		h[i] = (struct egress_header){set->headers[i].name, value};
		values[c->n_headers++] = value;
	}
	*headers = h;
	*n = c->n_headers;
	return 0;
}

static void emit_upstream(void *ctx, const void *bytes, size_t len)
{
	struct net_egress_conn *c = ctx;
	evbuffer_add(net_egress_stream_output(c->upstream), bytes, len);
}

/* --- moving bytes ---------------------------------------------------------------- */

/* Pauses from while its partner's output is full; the partner's write
 * callback (at half) resumes it. */
static void throttle(struct net_egress_stream *from, struct net_egress_stream *to)
{
	if (evbuffer_get_length(net_egress_stream_output(to)) >= MAX_QUEUED) {
		net_egress_stream_write_low(to, MAX_QUEUED / 2);
		net_egress_stream_reading(from, false);
	}
}

static void on_write(struct net_egress_stream *s, void *arg)
{
	struct net_egress_conn *c = arg;
	if (c->finishing) {
		if (flushed(c))
			conn_free(c);
		return;
	}
	struct net_egress_stream *other = s == c->client ? c->upstream : c->client;
	if (other && evbuffer_get_length(net_egress_stream_output(s)) <= MAX_QUEUED / 2) {
		net_egress_stream_write_low(s, 0);
		net_egress_stream_reading(other, true);
	}
}

static void on_upstream_read(struct net_egress_stream *s, void *arg)
{
	struct net_egress_conn *c = arg;
	evbuffer_add_buffer(net_egress_stream_output(c->client), net_egress_stream_input(s));
	throttle(s, c->client);
}

static void on_client_read(struct net_egress_stream *s, void *arg)
{
	struct net_egress_conn *c = arg;
	struct evbuffer *in = net_egress_stream_input(s);
	if (c->finishing) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return;
	}
	if (c->failure) {
		answer(c, 502, "Bad Gateway", c->failure);
		return;
	}
	if (!c->upstream_ready)
		return; /* kept in its input until the destination answers */
	while (evbuffer_get_length(in) > 0) {
		struct evbuffer_iovec v;
		if (evbuffer_peek(in, -1, NULL, &v, 1) < 1)
			break;
		struct err why;
		enum egress_http_status st = egress_http_feed(c->http, v.iov_base, v.iov_len, &why);
		evbuffer_drain(in, v.iov_len);
		if (st == EGRESS_HTTP_BAD) {
			answer(c, 400, "Bad Request", why.msg);
			return;
		}
		if (st == EGRESS_HTTP_REFUSED) {
			answer(c, 502, "Bad Gateway", why.msg);
			return;
		}
	}
	throttle(s, c->upstream);
}

static void on_event(struct net_egress_stream *s, enum net_egress_stream_event what, void *arg)
{
	struct net_egress_conn *c = arg;
	if (s == c->upstream && what == NET_EGRESS_STREAM_CONNECTED) {
		c->upstream_ready = true;
		net_egress_stream_idle(c->upstream, IDLE_SECONDS);
		if (c->client)
			on_client_read(c->client, c);
		return;
	}
	if (what == NET_EGRESS_STREAM_CONNECTED)
		return; /* the sandbox's handshake */
	if (s == c->upstream && !c->upstream_ready) {
		struct err why;
		SSL *ssl = net_egress_stream_ssl(s);
		long verify = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
		unsigned long e = net_egress_stream_ssl_error(s);
		if (what == NET_EGRESS_STREAM_TIMEOUT)
			err_set(&why, ETIMEDOUT, "no TLS handshake within %d s", CONNECT_SECONDS);
		else if (verify != X509_V_OK)
			err_set(&why, 0, "its certificate does not verify: %s",
				X509_verify_cert_error_string(verify));
		else if (e)
			err_set(&why, 0, "TLS: %s", ERR_reason_error_string(e));
		else
			err_set(&why, 0, "the connection failed");
		fail_upstream(c, why.msg);
		return;
	}
	finish(c); /* an end, an error or a timeout, either way */
}

/* --- connecting -------------------------------------------------------------------- */

static void on_relay_done(void *arg)
{
	conn_free(arg);
}

/* The destination's socket is connected (early: its first bytes, already
 * read, when a tunnel brought them with its reply). */
static void upstream_open(struct net_egress_conn *c, const unsigned char *early, size_t early_len)
{
	if (early_len && c->intercept) {
		fail_upstream(c, "the destination spoke first");
		return;
	}
	if (!c->intercept) {
		c->relay = net_egress_splice_new(c->env->base, c->cfd, c->ufd, early, early_len, IDLE_SECONDS,
			on_relay_done, c);
		if (!c->relay) {
			conn_free(c);
			return;
		}
		c->cfd = c->ufd = -1;
		return;
	}
	int ufd = c->ufd;
	c->ufd = -1;
	const struct net_egress_stream_callbacks cb = {on_upstream_read, on_write, on_event, c};
	c->upstream = !c->plain ? net_egress_tls_side(c->env, c->sni, ufd, false, &cb)
				: net_egress_stream_new(c->env->base, ufd, NULL, false, &cb);
	if (!c->upstream) {
		close(ufd);
		fail_upstream(c, "out of memory");
		return;
	}
	if (!c->plain) {
		/* The handshake's time counts against the connect. */
		net_egress_stream_idle(c->upstream, CONNECT_SECONDS);
		return;
	}
	c->upstream_ready = true; /* plain HTTP: connected is ready */
	net_egress_stream_idle(c->upstream, IDLE_SECONDS);
	on_client_read(c->client, c);
}

static void on_connected(evutil_socket_t fd, short what, void *arg)
{
	struct net_egress_conn *c = arg;
	int err = 0;
	socklen_t len = sizeof err;
	if (what & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		err = errno;
	event_free(c->ev);
	c->ev = NULL;
	if (err) {
		/* The sandbox's own rules refuse many: that is their answer. */
		fail_upstream(c, strerror(err));
		return;
	}
	upstream_open(c, NULL, 0);
}

static void on_dialed(void *ctx, int fd, const unsigned char *early, size_t early_len, const struct err *why)
{
	struct net_egress_conn *c = ctx;
	c->dial = NULL;
	if (fd < 0) {
		fail_upstream(c, why->msg);
		return;
	}
	c->ufd = fd;
	upstream_open(c, early, early_len);
}

static void connect_upstream(struct net_egress_conn *c)
{
	if (c->env->policy->tunnel.set) {
		struct err why;
		c->dial = net_egress_tunnel_dial(c->env, c->by_name ? c->sni : NULL, &c->dst, on_dialed, c,
			&why);
		if (!c->dial)
			fail_upstream(c, why.msg);
		return;
	}
	c->ufd = runtime_socket(c->env->sb, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	unsigned mark = NET_EGRESS_MARK;
	int one = 1;
	if (c->ufd < 0 || setsockopt(c->ufd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0 ||
		setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
		fail_upstream(c, strerror(errno));
		return;
	}
	if (connect(c->ufd, (struct sockaddr *)&c->dst, sizeof c->dst) != 0 && errno != EINPROGRESS) {
		fail_upstream(c, strerror(errno));
		return;
	}
	struct timeval tv = {CONNECT_SECONDS, 0};
	c->ev = event_new(c->env->base, c->ufd, EV_WRITE, on_connected, c);
	if (!c->ev || event_add(c->ev, &tv) != 0)
		fail_upstream(c, "out of memory");
}

/* Admitted, to where it goes: pass on or intercept. */
static void go(struct net_egress_conn *c)
{
	c->intercept = c->sni[0] && net_rules_match(&c->env->policy->rules, c->sni) != NULL;
	if (c->intercept) {
		const struct net_egress_stream_callbacks cb = {on_client_read, on_write, on_event, c};
		c->http = egress_http_new(request_headers, emit_upstream, c);
		c->client = !c->http ? NULL
			: c->plain   ? net_egress_stream_new(c->env->base, c->cfd, NULL, true, &cb)
				     : net_egress_tls_side(c->env, c->sni, c->cfd, true, &cb);
		if (!c->client) {
			conn_free(c);
			return;
		}
		c->cfd = -1;
		net_egress_stream_idle(c->client, IDLE_SECONDS);
	}
	connect_upstream(c);
}

/* Refused: the sandbox's connection is reset, as a firewall's would be. */
static void refuse(struct net_egress_conn *c, const char *why)
{
	fprintf(stderr, "egress proxy: refused %s\n", why);
	struct linger reset = {1, 0};
	setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
	conn_free(c);
}

static void on_admitted(void *ctx, const struct sockaddr_in *to, const struct err *why)
{
	struct net_egress_conn *c = ctx;
	c->lookup = NULL;
	if (!to) {
		refuse(c, why->msg);
		return;
	}
	c->dst = *to;
	go(c);
}

/* The name is read (or none can be): admit, then go. */
static void decide(struct net_egress_conn *c, bool named)
{
	int one = 1;
	setsockopt(c->cfd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one);
	event_free(c->ev);
	c->ev = NULL;
	if (!named)
		c->sni[0] = '\0';
	/* Plain HTTP that a rule will add headers to goes to its name's own
	 * server: nothing else would tell a sandbox's chosen address from it. */
	bool pin = c->plain && named && net_rules_match(&c->env->policy->rules, c->sni) != NULL;
	struct err why;
	const struct net_policy *p = c->env->policy;
	switch (net_egress_admit(c->env, &c->dst, named ? c->sni : NULL, pin, on_admitted, c, &c->lookup,
		&why)) {
	case NET_EGRESS_GO:
		/* A tunnel goes by name where a name was what let it through. */
		c->by_name = p->tunnel.set && named &&
			(pin || !net_policy_allows_address(p, ntohl(c->dst.sin_addr.s_addr)));
		go(c);
		break;
	case NET_EGRESS_REFUSED:
		refuse(c, why.msg);
		break;
	case NET_EGRESS_LOOKING:
		break;
	}
}

static void on_peek(evutil_socket_t fd, short what, void *arg)
{
	struct net_egress_conn *c = arg;
	if (what & EV_TIMEOUT) {
		conn_free(c);
		return;
	}
	static unsigned char hello[EGRESS_SNI_MAX_BYTES];
	ssize_t n = recv(fd, hello, c->plain ? EGRESS_HOST_MAX_BYTES : sizeof hello, MSG_PEEK);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_free(c);
		return;
	}
	bool more, named;
	if (c->plain) {
		enum egress_host_result r = egress_host_parse(hello, (size_t)n, c->sni, sizeof c->sni);
		more = r == EGRESS_HOST_MORE && (size_t)n < EGRESS_HOST_MAX_BYTES;
		named = r == EGRESS_HOST_FOUND;
	} else {
		enum egress_sni_result r = egress_sni_parse(hello, (size_t)n, c->sni, sizeof c->sni);
		more = r == EGRESS_SNI_MORE && (size_t)n < sizeof hello;
		named = r == EGRESS_SNI_FOUND;
	}
	if (more) {
		/* Quiet until more than this has come, within what is left of the wait
		 * (the persistent event's timeout would start again at each read). */
		int more_bytes = (int)n + 1;
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &more_bytes, sizeof more_bytes);
		int64_t left = c->peek_until_ms - clock_monotonic_ms();
		if (left <= 0 || event_add(c->ev, &(struct timeval){left / 1000, (left % 1000) * 1000}) != 0)
			conn_free(c);
		return;
	}
	decide(c, named);
}

void net_egress_conn_accept(struct net_egress_env *env, int fd)
{
	struct net_egress_conn *c = env->n_conns < NET_EGRESS_MAX_CONNS ? calloc(1, sizeof *c) : NULL;
	socklen_t len = sizeof(struct sockaddr_in);
	if (!c) {
		close(fd);
		return;
	}
	*c = (struct net_egress_conn){.env = env, .cfd = fd, .ufd = -1, .next = env->conns};
	if (env->conns)
		env->conns->prev = c;
	env->conns = c;
	env->n_conns++;
	/* Small TLS records both ways: no waiting for an ACK to send them. */
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* Where the sandbox was going before its table sent it here. */
	if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &c->dst, &len) != 0 || c->dst.sin_family != AF_INET) {
		conn_free(c);
		return;
	}
	c->plain = ntohs(c->dst.sin_port) == 80;
	struct timeval tv = {PEEK_SECONDS, 0};
	c->peek_until_ms = clock_monotonic_ms() + PEEK_SECONDS * 1000;
	c->ev = event_new(env->base, fd, EV_READ | EV_PERSIST, on_peek, c);
	if (!c->ev || event_add(c->ev, &tv) != 0)
		conn_free(c);
}

void net_egress_conn_close_all(struct net_egress_env *env)
{
	while (env->conns)
		conn_free(env->conns);
}
