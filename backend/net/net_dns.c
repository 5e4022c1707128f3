/* The DNS relay (net_dns.h). UDP: one connected socket per query in the
 * backend's namespace, answered back through the sandbox's socket; a
 * query with no answer after DNS_TIMEOUT_MS goes to the next resolver, then
 * is dropped (the client retries). TCP: a byte pipe per connection. */
#define _GNU_SOURCE
#include "net/net_dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DNS_MAX_UPSTREAMS 3
#define DNS_TIMEOUT_MS 2000
#define DNS_TCP_IDLE_S 10
#define DNS_MAX_UDP 4096 /* EDNS answers larger than this go over TCP */

static struct {
	struct event_base *base;
	struct sockaddr_storage up[DNS_MAX_UPSTREAMS];
	socklen_t up_len[DNS_MAX_UPSTREAMS];
	int n_up;
	int n_queries, n_pipes; /* of every relay */
} g;

struct query {
	struct query *next;
	struct net_dns *relay;
	int fd, upstream;
	struct event *ev;
	struct sockaddr_storage client;
	socklen_t client_len;
	size_t len;
	unsigned char msg[512]; /* the query, for a retry; longer ones are not retried */
};

struct pipe_conn {
	struct pipe_conn *next;
	struct net_dns *relay;
	struct bufferevent *client, *up;
};

struct net_dns {
	int udp_fd, tcp_fd;
	struct event *udp_ev, *tcp_ev;
	const bool *refuse;
	struct query *queries;
	struct pipe_conn *pipes;
	int n_queries, n_pipes;
};

static void add_upstream(const char *text)
{
	if (g.n_up == DNS_MAX_UPSTREAMS)
		return;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&g.up[g.n_up];
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&g.up[g.n_up];
	memset(&g.up[g.n_up], 0, sizeof g.up[0]);
	if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(53);
		g.up_len[g.n_up++] = sizeof *v4;
	} else if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(53);
		g.up_len[g.n_up++] = sizeof *v6;
	}
}

int net_dns_init(struct event_base *base)
{
	g.base = base;
	g.n_up = 0;
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[512];
	while (f && fgets(line, sizeof line, f)) {
		char addr[128];
		if (sscanf(line, " nameserver %127s", addr) == 1)
			add_upstream(addr);
	}
	if (f)
		fclose(f);
	if (g.n_up == 0)
		add_upstream("127.0.0.1"); /* what the resolver library does with no nameserver */
	return 0;
}

int net_dns_upstreams(void)
{
	return g.n_up;
}

static void query_free(struct query *q)
{
	struct net_dns *d = q->relay;
	for (struct query **p = &d->queries; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	d->n_queries--;
	g.n_queries--;
	if (q->ev)
		event_free(q->ev);
	if (q->fd >= 0)
		close(q->fd);
	free(q);
}

static void on_answer(evutil_socket_t fd, short what, void *arg);

/* Sends q to upstream number i from a fresh socket; -1 when it cannot. */
static int query_send(struct query *q, int i)
{
	if (q->ev)
		event_free(q->ev);
	if (q->fd >= 0)
		close(q->fd);
	q->ev = NULL;
	q->upstream = i;
	q->fd = socket(g.up[i].ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (q->fd < 0 || connect(q->fd, (struct sockaddr *)&g.up[i], g.up_len[i]) != 0 ||
		send(q->fd, q->msg, q->len, 0) != (ssize_t)q->len)
		return -1;
	q->ev = event_new(g.base, q->fd, EV_READ | EV_PERSIST, on_answer, q);
	struct timeval tv = {DNS_TIMEOUT_MS / 1000, (DNS_TIMEOUT_MS % 1000) * 1000};
	return q->ev && event_add(q->ev, &tv) == 0 ? 0 : -1;
}

static void on_answer(evutil_socket_t fd, short what, void *arg)
{
	struct query *q = arg;
	if (what & EV_TIMEOUT) {
		if (q->upstream + 1 < g.n_up && query_send(q, q->upstream + 1) == 0)
			return;
		query_free(q);
		return;
	}
	unsigned char buf[DNS_MAX_UDP];
	ssize_t n = recv(fd, buf, sizeof buf, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Only an answer to this query (same id, QR set) goes back. */
	if (n >= 12 && buf[0] == q->msg[0] && buf[1] == q->msg[1] && (buf[2] & 0x80)) {
		sendto(q->relay->udp_fd, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&q->client,
			q->client_len);
	} else if (n >= 0) {
		return; /* not ours: keep waiting */
	}
	query_free(q);
}

/* RCODE 5 (REFUSED) in the query's own header, no records. */
static void refuse(struct net_dns *d, unsigned char *msg, size_t len, const struct sockaddr_storage *from,
	socklen_t from_len)
{
	(void)len;
	unsigned char out[12];
	memcpy(out, msg, 12);
	out[2] = (unsigned char)((msg[2] & 0x79) | 0x80); /* QR, keep opcode and RD */
	out[3] = 5;
	memset(out + 4, 0, 8);
	sendto(d->udp_fd, out, sizeof out, MSG_DONTWAIT, (const struct sockaddr *)from, from_len);
}

static void on_udp(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct net_dns *d = arg;
	for (int i = 0; i < 32; i++) {
		unsigned char buf[DNS_MAX_UDP];
		struct sockaddr_storage from;
		socklen_t from_len = sizeof from;
		ssize_t n = recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &from_len);
		if (n < 0)
			return;
		if (n < 12 || (buf[2] & 0x80))
			continue; /* not a query */
		if (*d->refuse) {
			refuse(d, buf, (size_t)n, &from, from_len);
			continue;
		}
		if (d->n_queries >= NET_DNS_MAX_PENDING || g.n_queries >= NET_DNS_MAX_PENDING_ALL ||
			(size_t)n > sizeof((struct query *)0)->msg)
			continue; /* dropped: the client asks again */
		struct query *q = calloc(1, sizeof *q);
		if (!q)
			continue;
		q->relay = d;
		q->fd = -1;
		q->client = from;
		q->client_len = from_len;
		q->len = (size_t)n;
		memcpy(q->msg, buf, (size_t)n);
		q->next = d->queries;
		d->queries = q;
		d->n_queries++;
		g.n_queries++;
		if (query_send(q, 0) != 0)
			query_free(q);
	}
}

static void pipe_free(struct pipe_conn *c)
{
	struct net_dns *d = c->relay;
	for (struct pipe_conn **p = &d->pipes; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	d->n_pipes--;
	g.n_pipes--;
	if (c->client)
		bufferevent_free(c->client);
	if (c->up)
		bufferevent_free(c->up);
	free(c);
}

static void on_pipe_read(struct bufferevent *bev, void *arg)
{
	struct pipe_conn *c = arg;
	struct bufferevent *to = bev == c->client ? c->up : c->client;
	evbuffer_add_buffer(bufferevent_get_output(to), bufferevent_get_input(bev));
}

static void on_pipe_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		pipe_free(arg); /* one exchange per connection is what resolvers do */
}

static void on_tcp(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct net_dns *d = arg;
	int client = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (client < 0)
		return;
	if (*d->refuse || d->n_pipes >= NET_DNS_MAX_TCP || g.n_pipes >= NET_DNS_MAX_TCP_ALL) {
		close(client);
		return;
	}
	struct pipe_conn *c = calloc(1, sizeof *c);
	if (!c) {
		close(client);
		return;
	}
	c->relay = d;
	c->client = bufferevent_socket_new(g.base, client, BEV_OPT_CLOSE_ON_FREE);
	c->up = bufferevent_socket_new(g.base, -1, BEV_OPT_CLOSE_ON_FREE);
	c->next = d->pipes;
	d->pipes = c;
	d->n_pipes++;
	g.n_pipes++;
	if (!c->client || !c->up) {
		if (!c->client)
			close(client);
		pipe_free(c);
		return;
	}
	struct timeval idle = {DNS_TCP_IDLE_S, 0};
	bufferevent_setcb(c->client, on_pipe_read, NULL, on_pipe_event, c);
	bufferevent_setcb(c->up, on_pipe_read, NULL, on_pipe_event, c);
	bufferevent_set_timeouts(c->client, &idle, &idle);
	bufferevent_set_timeouts(c->up, &idle, &idle);
	bufferevent_enable(c->client, EV_READ | EV_WRITE);
	bufferevent_enable(c->up, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(c->up, (struct sockaddr *)&g.up[0], (int)g.up_len[0]) != 0)
		pipe_free(c);
}

struct net_dns *net_dns_open(int udp_fd, int tcp_fd, const bool *refuse_flag)
{
	struct net_dns *d = calloc(1, sizeof *d);
	if (d) {
		d->udp_fd = udp_fd;
		d->tcp_fd = tcp_fd;
		d->refuse = refuse_flag;
		d->udp_ev = event_new(g.base, udp_fd, EV_READ | EV_PERSIST, on_udp, d);
		d->tcp_ev = event_new(g.base, tcp_fd, EV_READ | EV_PERSIST, on_tcp, d);
	}
	if (!d || !d->udp_ev || !d->tcp_ev || event_add(d->udp_ev, NULL) != 0 ||
		event_add(d->tcp_ev, NULL) != 0) {
		if (d) {
			if (d->udp_ev)
				event_free(d->udp_ev);
			if (d->tcp_ev)
				event_free(d->tcp_ev);
			free(d);
		}
		close(udp_fd);
		close(tcp_fd);
		return NULL;
	}
	return d;
}

void net_dns_close(struct net_dns *d)
{
	if (!d)
		return;
	while (d->queries)
		query_free(d->queries);
	while (d->pipes)
		pipe_free(d->pipes);
	event_free(d->udp_ev);
	event_free(d->tcp_ev);
	close(d->udp_fd);
	close(d->tcp_fd);
	free(d);
}
