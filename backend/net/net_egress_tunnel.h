/* A connection's way out through the sandbox's network.egressProxy (SOCKS5,
 * egress/egress_socks.h): from the backend's namespace (the sandbox's rules
 * were applied when it was admitted, net_egress_admit.h), to the proxy's
 * address (its name resolved at each dial, as E2B does), CONNECT to the
 * destination by name or by address. Fails closed: no proxy, no way out. */
#ifndef E2B_BACKEND_NET_EGRESS_TUNNEL_H
#define E2B_BACKEND_NET_EGRESS_TUNNEL_H

#include <netinet/in.h>
#include <stddef.h>

struct err;
struct net_egress_env;
struct net_egress_dial;

#define NET_EGRESS_TUNNEL_SECONDS 10 /* to reach the proxy and have its CONNECT answered */

/* fd: the open tunnel (the caller owns it), or -1 with err (no credential
 * in it, status an errno or 0; NULL with a tunnel). early/early_len: bytes
 * of the destination's that came with the proxy's reply. */
typedef void (*net_egress_dialed)(void *ctx, int fd, const unsigned char *early, size_t early_len,
	const struct err *err);

/* Dials dst (or name, when not NULL: the proxy resolves it) through env's
 * tunnel; done is called later, never from within. NULL with err. */
struct net_egress_dial *net_egress_tunnel_dial(struct net_egress_env *env, const char *name,
	const struct sockaddr_in *dst, net_egress_dialed done, void *ctx, struct err *err);
/* done will not be called; the socket is closed. */
void net_egress_tunnel_cancel(struct net_egress_dial *d);

#endif
