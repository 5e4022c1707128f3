/* One side of a connection the egress proxy intercepts: a non-blocking
 * socket, TLS (server or client) or plain, whose bytes the proxy reads and
 * writes through two evbuffers, as a libevent bufferevent would. Unlike
 * libevent 2.1's (whose socket reads stop at 4 KiB, and whose TLS side
 * reads one or two records a wakeup and writes each record with a syscall
 * of its own), it reads what the socket holds in one read(2) of up to
 * NET_EGRESS_STREAM_CHUNK, decrypts every record that brought, and writes
 * all the records it made in one write(2): TLS goes through an in-memory
 * BIO pair between OpenSSL and the socket. It stops reading while its
 * input holds 1 MiB the owner has not drained. Callbacks run from the event
 * loop only, never from inside a call made on the stream; any of them may
 * free the stream. */
#ifndef E2B_BACKEND_NET_EGRESS_STREAM_H
#define E2B_BACKEND_NET_EGRESS_STREAM_H

#include <openssl/types.h>
#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct evbuffer;
struct net_egress_stream;

#define NET_EGRESS_STREAM_CHUNK (64 << 10) /* one read(2), and the BIO pair's size each way */

/* What on_event reports (one at a time). */
enum net_egress_stream_event {
	NET_EGRESS_STREAM_CONNECTED = 1, /* the TLS handshake is done (never for plain) */
	NET_EGRESS_STREAM_EOF,           /* the peer ended (a TCP end or TLS close_notify) */
	NET_EGRESS_STREAM_ERROR,         /* the socket or TLS failed */
	NET_EGRESS_STREAM_TIMEOUT,       /* nothing read for the idle time while reading */
};

struct net_egress_stream_callbacks {
	void (*on_read)(struct net_egress_stream *s, void *ctx);  /* new bytes in the input */
	void (*on_write)(struct net_egress_stream *s, void *ctx); /* the output fell to its low mark */
	void (*on_event)(struct net_egress_stream *s, enum net_egress_stream_event what, void *ctx);
	void *ctx;
};

/* Takes fd (connected, non-blocking) and ssl (NULL: plain; else set up for
 * its side, accepting when server): both are the stream's once made, and
 * freed with it. NULL when out of memory (then the caller still owns both). */
struct net_egress_stream *net_egress_stream_new(struct event_base *base, int fd, SSL *ssl, bool server,
	const struct net_egress_stream_callbacks *cb);
/* Sends close_notify when TLS was set up (best effort, never waits), closes the socket. */
void net_egress_stream_free(struct net_egress_stream *s);

/* The bytes read (decrypted) and not yet drained by the owner, and the
 * bytes to send: adding to the output sends them from the loop. */
struct evbuffer *net_egress_stream_input(struct net_egress_stream *s);
struct evbuffer *net_egress_stream_output(struct net_egress_stream *s);
/* Bytes given to the stream and not yet taken by the socket (output and
 * TLS records made from it). */
size_t net_egress_stream_unsent(const struct net_egress_stream *s);

/* Whether it reads (on at first). While off, neither the socket nor TLS is
 * read, so the peer is held back by TCP. */
void net_egress_stream_reading(struct net_egress_stream *s, bool on);
/* on_write is called once the output holds low bytes or fewer (0 at first:
 * once everything is sent). */
void net_egress_stream_write_low(struct net_egress_stream *s, size_t low);
/* TIMEOUT when reading and no byte was read or sent for seconds (0: never). */
void net_egress_stream_idle(struct net_egress_stream *s, int seconds);

SSL *net_egress_stream_ssl(const struct net_egress_stream *s);
/* The first OpenSSL error code of a failure (0: none). */
unsigned long net_egress_stream_ssl_error(const struct net_egress_stream *s);

#endif
