/* net/net_egress_splice.c over real TCP on loopback: bytes both ways
 * intact, the bytes a tunnel read early first, a half close passed on with
 * the answer after it still coming back, an end when a peer resets, and an
 * end after the idle time with nothing moving. The sandbox's and the
 * destination's ends are driven by threads with blocking I/O while the
 * relay runs on the loop. */
#define _GNU_SOURCE
#include "check.h"
#include "loopback.h"
#include "net/net_egress_splice.h"
#include "suites.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UP_BYTES (24u << 20)   /* sandbox -> destination */
#define DOWN_BYTES (40u << 20) /* destination -> sandbox, after the half close */

static bool write_pattern(int fd, uint64_t from, uint64_t n)
{
	uint8_t buf[65536];
	for (uint64_t done = 0; done < n;) {
		size_t k = n - done < sizeof buf ? (size_t)(n - done) : sizeof buf;
		for (size_t i = 0; i < k; i++)
			buf[i] = pattern(from + done + i);
		for (size_t off = 0; off < k;) {
			ssize_t w = write(fd, buf + off, k - off);
			if (w <= 0)
				return false;
			off += (size_t)w;
		}
		done += k;
	}
	return true;
}

/* Reads to the end; counts what it got and whether every byte followed the pattern from `from`. */
static uint64_t read_pattern(int fd, uint64_t from, bool *intact)
{
	uint8_t buf[65536];
	uint64_t got = 0;
	*intact = true;
	for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0; got += (uint64_t)r)
		for (ssize_t i = 0; i < r; i++)
			*intact &= buf[i] == pattern(from + got + (uint64_t)i);
	return got;
}

struct ends {
	int sandbox, destination; /* the test's ends */
	uint64_t up_got, down_got;
	bool up_intact, down_intact, early_ok;
	const char *early;
};

/* The destination: reads until the sandbox's half close, then answers. */
static void *destination(void *arg)
{
	struct ends *e = arg;
	e->up_got = read_pattern(e->destination, 0, &e->up_intact);
	write_pattern(e->destination, 0, DOWN_BYTES);
	close(e->destination);
	return NULL;
}

/* The sandbox: sends, ends its writing, reads the answer (after the early bytes). */
static void *sandbox(void *arg)
{
	struct ends *e = arg;
	write_pattern(e->sandbox, 0, UP_BYTES);
	shutdown(e->sandbox, SHUT_WR);
	size_t n = strlen(e->early);
	char got[16] = {0};
	size_t have = 0;
	while (have < n) {
		ssize_t r = read(e->sandbox, got + have, n - have);
		if (r <= 0)
			break;
		have += (size_t)r;
	}
	e->early_ok = have == n && memcmp(got, e->early, n) == 0;
	e->down_got = read_pattern(e->sandbox, 0, &e->down_intact);
	close(e->sandbox);
	return NULL;
}

struct run {
	struct event_base *base;
	struct net_egress_splice *s;
	int done_calls;
};

/* As the proxy does: the relay is freed (its sockets closed) at once. */
static void on_done(void *arg)
{
	struct run *r = arg;
	r->done_calls++;
	net_egress_splice_free(r->s);
	r->s = NULL;
	event_base_loopbreak(r->base);
}

static void both_ways(void)
{
	int sandbox_end = -1, client = -1, upstream = -1, destination_end = -1;
	CHECK(tcp_pair(&sandbox_end, &client) == 0);
	CHECK(tcp_pair(&upstream, &destination_end) == 0);
	nonblocking(client);
	nonblocking(upstream);
	struct run r = {.base = event_base_new()};
	struct ends e = {.sandbox = sandbox_end, .destination = destination_end, .early = "EARLY"};
	r.s = net_egress_splice_new(r.base, client, upstream, (const unsigned char *)"EARLY", 5, 30, on_done,
		&r);
	CHECK(r.s != NULL);
	pthread_t t1, t2;
	pthread_create(&t1, NULL, destination, &e);
	pthread_create(&t2, NULL, sandbox, &e);
	event_base_dispatch(r.base);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	CHECK(r.done_calls == 1); /* both directions ended */
	CHECK(e.up_got == UP_BYTES && e.up_intact);
	CHECK(e.early_ok);
	CHECK(e.down_got == DOWN_BYTES && e.down_intact); /* the answer after the half close */
	net_egress_splice_free(r.s);                      /* NULL once done */
	event_base_free(r.base);
}

/* The destination resets while the sandbox is still sending: the relay ends. */
static void reset(void)
{
	int sandbox_end = -1, client = -1, upstream = -1, destination_end = -1;
	CHECK(tcp_pair(&sandbox_end, &client) == 0);
	CHECK(tcp_pair(&upstream, &destination_end) == 0);
	nonblocking(client);
	nonblocking(upstream);
	struct run r = {.base = event_base_new()};
	r.s = net_egress_splice_new(r.base, client, upstream, NULL, 0, 30, on_done, &r);
	CHECK(r.s != NULL);
	struct linger rst = {1, 0};
	setsockopt(destination_end, SOL_SOCKET, SO_LINGER, &rst, sizeof rst);
	close(destination_end);
	CHECK(write(sandbox_end, "after the reset", 15) == 15);
	event_base_dispatch(r.base);
	CHECK(r.done_calls == 1);
	net_egress_splice_free(r.s); /* NULL once done */
	close(sandbox_end);
	event_base_free(r.base);
}

/* Nothing moves either way: the relay ends after its idle time, not before. */
static void idle(void)
{
	int sandbox_end = -1, client = -1, upstream = -1, destination_end = -1;
	CHECK(tcp_pair(&sandbox_end, &client) == 0);
	CHECK(tcp_pair(&upstream, &destination_end) == 0);
	nonblocking(client);
	nonblocking(upstream);
	struct run r = {.base = event_base_new()};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r.s = net_egress_splice_new(r.base, client, upstream, NULL, 0, 1, on_done, &r);
	CHECK(r.s != NULL);
	event_base_dispatch(r.base);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(r.done_calls == 1);
	CHECK(waited >= 0.9 && waited < 5);
	net_egress_splice_free(r.s); /* NULL once done */
	close(sandbox_end);
	close(destination_end);
	event_base_free(r.base);
}

void suite_egress_splice(void)
{
	signal(SIGPIPE, SIG_IGN); /* as the backend: a write to a reset peer is an error, not a signal */
	both_ways();
	reset();
	idle();
}
