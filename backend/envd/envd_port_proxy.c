/* Forwarding to a port inside a sandbox (see envd_port_proxy.h). */
#define _GNU_SOURCE
#include "envd/envd_port_proxy.h"

#include "http/http_conns.h"
#include "http/http_framing.h"
#include "http/http_gate.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/clock.h"
#include "registry/registry.h"
#include "runtime/runtime_enter.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct proxy {
	struct proxy *prev, *next; /* live proxies, for port_proxy_shutdown */
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	struct bufferevent *up;     /* to the sandbox port */
	struct bufferevent *client; /* taken over from evhttp once up is connected */
	struct event *idle;         /* checks for a connection silent both ways */
	int64_t idle_ms, last_ms;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	long port;
	struct http_framing body; /* the request's body, as the client frames it */
	bool tunnel;              /* an upgrade: bytes flow both ways unchanged */
	char *mask_host;          /* maskRequestHost with the port in, or NULL */
	struct event_base *base;
	bool https; /* network.httpsPorts has the port: TLS on top once connected */
	bool up_eof, client_eof;
};

/* Every live proxy (the backend has one loop and one envd listener). */
static struct proxy *live;

static void link_proxy(struct proxy *p)
{
	p->next = live;
	if (live)
		live->prev = p;
	live = p;
}

/* Unlinks and frees p (not the client connection). */
static void drop(struct proxy *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		live = p->next;
	if (p->next)
		p->next->prev = p->prev;
	if (p->up)
		bufferevent_free(p->up);
	if (p->idle)
		event_free(p->idle);
	free(p->mask_host);
	free(p);
}

int port_proxy_reply_closed(struct evhttp_request *req, const char *id, long port)
{
	cJSON *body = cJSON_CreateObject();
	if (body) {
		cJSON_AddStringToObject(body, "sandboxId", id);
		cJSON_AddStringToObject(body, "message", "The sandbox is running but port is not open");
		cJSON_AddNumberToObject(body, "port", (double)port);
		cJSON_AddNumberToObject(body, "code", 502);
	}
	return reply_json(req, 502, body);
}

static void proxy_free(struct proxy *p)
{
	if (p->evcon && p->client) {
		http_conn_set_closecb(p->evcon, NULL, NULL);
		evhttp_connection_free(p->evcon); /* frees the request and the client socket */
	}
	drop(p);
}

void port_proxy_shutdown(void)
{
	while (live) {
		struct proxy *p = live;
		if (p->client) {
			proxy_free(p);
		} else {
			/* Still connecting: evhttp keeps (and frees) the request. */
			http_conn_set_closecb(p->evcon, NULL, NULL);
			drop(p);
		}
	}
}

/* One side ended: finish once everything read has been written. */
static void maybe_finish(struct proxy *p)
{
	bool client_done = p->up_eof && evbuffer_get_length(bufferevent_get_output(p->client)) == 0;
	bool up_done = p->client_eof && (!p->up || evbuffer_get_length(bufferevent_get_output(p->up)) == 0);
	if (client_done || (up_done && p->up_eof))
		proxy_free(p);
	else if (up_done && p->up)
		shutdown(bufferevent_getfd(p->up), SHUT_WR); /* half-close towards the port */
}

static void pass(struct bufferevent *from, struct bufferevent *to)
{
	evbuffer_add_buffer(bufferevent_get_output(to), bufferevent_get_input(from));
	if (evbuffer_get_length(bufferevent_get_output(to)) > PORT_PROXY_HIGH_WATER)
		bufferevent_disable(from, EV_READ);
}

/* Client bytes towards the port: everything in a tunnel; otherwise the one
 * request's body and nothing after it (a pipelined request or stray bytes
 * never reach the port: the connection carries one exchange). */
static void pass_request(struct proxy *p, struct evbuffer *from)
{
	struct evbuffer *to = bufferevent_get_output(p->up);
	if (p->tunnel) {
		evbuffer_add_buffer(to, from);
	} else if (http_framing_take(&p->body, from, to, SIZE_MAX, true) != 0) {
		proxy_free(p); /* malformed chunked framing: nothing more is sent */
		return;
	}
	if (!p->tunnel && p->body.done) {
		evbuffer_drain(from, evbuffer_get_length(from));
		bufferevent_disable(p->client, EV_READ);
	} else if (evbuffer_get_length(to) > PORT_PROXY_HIGH_WATER) {
		bufferevent_disable(p->client, EV_READ);
	}
}

static void on_up_read(struct bufferevent *bev, void *arg)
{
	struct proxy *p = arg;
	p->last_ms = clock_now_ms();
	pass(bev, p->client);
}

static void on_client_read(struct bufferevent *bev, void *arg)
{
	struct proxy *p = arg;
	p->last_ms = clock_now_ms();
	if (!p->client_eof)
		pass_request(p, bufferevent_get_input(bev));
}

/* The output of one side drained below the low-water mark: read the other. */
static void on_up_write(struct bufferevent *bev, void *arg)
{
	(void)bev;
	struct proxy *p = arg;
	if (!p->client_eof && (p->tunnel || !p->body.done))
		bufferevent_enable(p->client, EV_READ);
	if (p->client_eof)
		maybe_finish(p);
}

static void on_client_write(struct bufferevent *bev, void *arg)
{
	(void)bev;
	struct proxy *p = arg;
	if (!p->up_eof)
		bufferevent_enable(p->up, EV_READ);
	else
		maybe_finish(p);
}

static void on_client_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct proxy *p = arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
		if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
			proxy_free(p);
			return;
		}
		p->client_eof = true;
		maybe_finish(p);
	}
}

/* Silent both ways for idle_ms: the connection goes (checked every half). */
static void on_idle_check(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proxy *p = arg;
	if (p->idle_ms <= 0)
		return;
	if (clock_now_ms() - p->last_ms >= p->idle_ms) {
		proxy_free(p);
		return;
	}
	struct timeval tv = {.tv_sec = p->idle_ms / 2000, .tv_usec = (p->idle_ms / 2 % 1000) * 1000};
	evtimer_add(p->idle, &tv);
}

/* The taken-over connection is being freed by someone else (the sandbox
 * was killed): forget it. */
static void on_taken_closed(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct proxy *p = arg;
	p->evcon = NULL;
	drop(p);
}

static void on_up_event(struct bufferevent *bev, short what, void *arg);

static bool hop_by_hop(const char *key)
{
	static const char *const names[] = {"Connection", "Keep-Alive", "Proxy-Connection",
		"Transfer-Encoding", "Content-Length", "Expect"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcasecmp(key, names[i]) == 0)
			return true;
	return false;
}

/* The request as received (the gate took its framing headers; they are
 * written back from the framing), re-sent to the port. */
static void write_head(struct proxy *p)
{
	struct evhttp_request *req = p->req;
	struct evbuffer *out = bufferevent_get_output(p->up);
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	evbuffer_add_printf(out, "%s %s HTTP/1.1\r\n", request_method_name(req), evhttp_request_get_uri(req));
	for (struct evkeyval *h = in->tqh_first; h; h = h->next.tqe_next) {
		if (p->mask_host && strcasecmp(h->key, "Host") == 0) {
			evbuffer_add_printf(out, "Host: %s\r\n", p->mask_host);
			continue;
		}
		if (strcasecmp(h->key, ENVD_TRAFFIC_TOKEN_HEADER) == 0)
			continue; /* the sandbox's servers never see the token */
		bool keep = p->tunnel ? strcasecmp(h->key, "Content-Length") != 0 : !hop_by_hop(h->key);
		if (keep)
			evbuffer_add_printf(out, "%s: %s\r\n", h->key, h->value);
	}
	if (!p->tunnel)
		evbuffer_add_printf(out, "Connection: close\r\n");
	if (p->body.kind == HTTP_FRAMING_CHUNKED)
		evbuffer_add_printf(out, "Transfer-Encoding: chunked\r\n");
	else if (p->body.kind == HTTP_FRAMING_LENGTH)
		evbuffer_add_printf(out, "Content-Length: %llu\r\n", (unsigned long long)p->body.length);
	evbuffer_add(out, "\r\n", 2);
}

static void take_over_client(struct proxy *p)
{
	struct http_gate *gate = http_conns_gate(p->req);
	struct evbuffer *early = evbuffer_new();
	if (!gate || !early) {
		if (early)
			evbuffer_free(early);
		proxy_free(p);
		return;
	}
	http_gate_take_over(gate, early, &p->body, &p->tunnel);
	http_conn_set_closecb(p->evcon, on_taken_closed, p);
	write_head(p);
	p->client = evhttp_connection_get_bufferevent(p->evcon);
	bufferevent_setcb(p->client, on_client_read, on_client_write, on_client_event, p);
	bufferevent_set_timeouts(p->client, NULL, NULL);
	bufferevent_setwatermark(p->client, EV_WRITE, PORT_PROXY_HIGH_WATER / 2, 0);
	bufferevent_setwatermark(p->up, EV_WRITE, PORT_PROXY_HIGH_WATER / 2, 0);
	bufferevent_setcb(p->up, on_up_read, on_up_write, on_up_event, p);
	bufferevent_enable(p->client, EV_READ | EV_WRITE);
	bufferevent_enable(p->up, EV_READ | EV_WRITE);
	p->last_ms = clock_now_ms();
	on_idle_check(-1, 0, p);
	/* Bytes the client sent after the head (a body, a first WebSocket frame). */
	pass_request(p, early);
	evbuffer_free(early);
}

/* network.httpsPorts: the port's server speaks TLS; E2B's proxy re-encrypts
 * the hop and does not verify it (a self-signed certificate is the norm). */
static struct bufferevent *tls_over(struct proxy *p)
{
	static SSL_CTX *ctx;
	if (!ctx && (ctx = SSL_CTX_new(TLS_client_method())))
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL *ssl = ctx ? SSL_new(ctx) : NULL;
	struct bufferevent *tls = ssl ? bufferevent_openssl_filter_new(p->base, p->up, ssl,
						BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)
				      : NULL;
	if (!tls) {
		SSL_free(ssl);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(tls, 1);
	return tls;
}

static void on_up_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	struct proxy *p = arg;
	if ((what & BEV_EVENT_CONNECTED) && p->https) {
		/* TCP is there: now the handshake, whose end is the CONNECTED that counts. */
		struct bufferevent *tls = tls_over(p);
		p->https = false;
		if (tls) {
			p->up = tls;
			bufferevent_setcb(p->up, NULL, NULL, on_up_event, p);
			bufferevent_enable(p->up, EV_READ | EV_WRITE);
			return;
		}
		what = BEV_EVENT_ERROR;
	}
	if (what & BEV_EVENT_CONNECTED) {
		/* Only the path is logged, as for every request. */
		fprintf(stderr, "envd %s %s -> port %ld\n", request_method_name(p->req), request_path(p->req),
			p->port);
		take_over_client(p);
		return;
	}
	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)))
		return;
	if (!p->client) {
		/* Nothing listens: evhttp still owns the request, answer it. */
		http_conn_set_closecb(p->evcon, NULL, NULL);
		request_log("envd", p->req, port_proxy_reply_closed(p->req, p->sandbox_id, p->port));
		drop(p);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		pass(p->up, p->client);
		p->up_eof = true;
		maybe_finish(p);
	} else {
		proxy_free(p);
	}
}

/* The client left before the port answered. */
static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct proxy *p = arg;
	http_conn_gone_free_request(p->req);
	drop(p);
}

/* maskRequestHost with every "${PORT}" replaced by the port, as E2B does. */
static char *mask_host(const char *mask, long port)
{
	static const char var[] = "${PORT}";
	char num[16];
	snprintf(num, sizeof num, "%ld", port);
	size_t n = 0;
	char *out = malloc(strlen(mask) + 1); /* a port is shorter than "${PORT}" */
	while (out && *mask) {
		if (strncmp(mask, var, sizeof var - 1) == 0) {
			memcpy(out + n, num, strlen(num));
			n += strlen(num);
			mask += sizeof var - 1;
		} else {
			out[n++] = *mask++;
		}
	}
	if (out)
		out[n] = '\0';
	return out;
}

int port_proxy_start(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb, long port)
{
	int fd = runtime_socket(sb, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct proxy *p = fd >= 0 ? calloc(1, sizeof *p) : NULL;
	if (p && !(p->up = bufferevent_socket_new(ctx->base, fd, BEV_OPT_CLOSE_ON_FREE))) {
		free(p);
		p = NULL;
	} else if (p) {
		fd = -1; /* the bufferevent closes it */
		p->idle = evtimer_new(ctx->base, on_idle_check, p);
	}
	if (!p || !p->idle) {
		if (p)
			bufferevent_free(p->up);
		free(p);
		if (fd >= 0)
			close(fd);
		return port_proxy_reply_closed(req, sb->id, port);
	}
	p->req = req;
	p->evcon = evhttp_request_get_connection(req);
	p->port = port;
	p->base = ctx->base;
	for (size_t i = 0; i < sb->n_https_ports; i++)
		p->https = p->https || sb->https_ports[i] == port;
	p->idle_ms = (int64_t)ctx->proxy_idle_timeout_s * 1000;
	snprintf(p->sandbox_id, sizeof p->sandbox_id, "%s", sb->id);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (sb->mask_request_host)
		p->mask_host = mask_host(sb->mask_request_host, port);
	link_proxy(p);
	bufferevent_setcb(p->up, NULL, NULL, on_up_event, p);
	http_conn_set_closecb(p->evcon, on_client_gone, p);
	if (bufferevent_socket_connect(p->up, (struct sockaddr *)&sin, sizeof sin) != 0) {
		http_conn_set_closecb(p->evcon, NULL, NULL);
		drop(p);
		return port_proxy_reply_closed(req, sb->id, port);
	}
	return ENVD_STATUS_PENDING;
}
