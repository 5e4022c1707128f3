/* The bytes of a connection the egress proxy passes on unchanged, moved by
 * the kernel: each direction is splice(2)d from one socket into a pipe and
 * from the pipe into the other socket, so nothing is copied through user
 * space and one wakeup moves all the socket holds (up to the pipe's size),
 * where libevent 2.1's socket reads stop at 4 KiB. An end one way is passed
 * on as a half close (shutdown(SHUT_WR)) once its bytes are out. */
#ifndef E2B_BACKEND_NET_EGRESS_SPLICE_H
#define E2B_BACKEND_NET_EGRESS_SPLICE_H

#include <stddef.h>

struct event_base;
struct net_egress_splice;

/* Both directions ended, one failed, or nothing moved either way for
 * idle_seconds: the caller frees the relay. */
typedef void (*net_egress_splice_done_fn)(void *ctx);

/* Relays between client and upstream (connected, non-blocking sockets; the
 * relay owns them once made and closes them when freed). early: bytes
 * already read from upstream, sent to client first. NULL when out of
 * memory or pipes (the caller still owns both sockets). */
struct net_egress_splice *net_egress_splice_new(struct event_base *base, int client, int upstream,
	const unsigned char *early, size_t early_len, int idle_seconds, net_egress_splice_done_fn done,
	void *ctx);
void net_egress_splice_free(struct net_egress_splice *s);

#endif
