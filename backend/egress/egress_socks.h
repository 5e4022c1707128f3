/* The client's side of a SOCKS5 handshake (RFC 1928, with RFC 1929's
 * username and password), for the egress proxy's tunnel through a proxy
 * the user names (E2B's network.egressProxy): greeting, method, optional
 * authentication, CONNECT, reply. Sans-IO: the caller sends what `out`
 * holds and feeds back what the proxy answers, in any chunking. */
#ifndef E2B_BACKEND_EGRESS_SOCKS_H
#define E2B_BACKEND_EGRESS_SOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;

#define EGRESS_SOCKS_FIELD_MAX 255 /* a username, a password, a domain name */

enum egress_socks_status {
	EGRESS_SOCKS_SEND,   /* out/out_len: the next message to send, then feed the answer */
	EGRESS_SOCKS_MORE,   /* the answer is not whole yet: feed more */
	EGRESS_SOCKS_OPEN,   /* the tunnel is open: what follows is the destination's */
	EGRESS_SOCKS_FAILED, /* err says what (never a credential; status 0) */
};

struct egress_socks {
	int step;
	unsigned char out[3 + 2 * (1 + EGRESS_SOCKS_FIELD_MAX) + 4]; /* the largest: authentication */
	size_t out_len;
	unsigned char in[4 + 1 + EGRESS_SOCKS_FIELD_MAX + 2]; /* the largest: a reply with a name */
	size_t in_len;
	char user[EGRESS_SOCKS_FIELD_MAX + 1], pass[EGRESS_SOCKS_FIELD_MAX + 1];
	char name[EGRESS_SOCKS_FIELD_MAX + 1]; /* CONNECT to this name, or "" for addr */
	uint32_t addr;                         /* host byte order */
	uint16_t port;
};

/* Starts a handshake to CONNECT to name (NULL or "": to addr) port,
 * authenticating with user/pass when user is not NULL. SEND with the
 * greeting in out, or FAILED (a field over 255 bytes) with err. */
enum egress_socks_status egress_socks_start(struct egress_socks *s, const char *user, const char *pass,
	const char *name, uint32_t addr, uint16_t port, struct err *err);
/* Feeds bytes the proxy sent. *used: how many belong to the handshake (after
 * OPEN the rest are the destination's). SEND, MORE, OPEN or FAILED with
 * err. */
enum egress_socks_status egress_socks_feed(struct egress_socks *s, const unsigned char *buf, size_t len,
	size_t *used, struct err *err);
/* Wipes the credentials (once OPEN or FAILED). */
void egress_socks_clear(struct egress_socks *s);

#endif
