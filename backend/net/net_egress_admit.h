/* Whether a connection through a sandbox's egress proxy may go, and where,
 * under allowOut's domain names: E2B matches them by the TLS server name on
 * port 443 and the HTTP Host on port 80, and so does this. A destination
 * allowOut/denyOut let through goes as the sandbox asked. A name allowOut
 * allows is resolved here, from the backend's resolvers, and the connection
 * goes to an address of that name (the one asked for when it is among
 * them, so a sandbox cannot take an allowed name to another address), which
 * the sandbox's chain lets past denyOut for that port for a minute
 * (net_nft_allow_upstream). Anything else is refused.
 * With network.egressProxy the tunnel takes every TCP connection: the
 * sandbox's own rules are applied here instead, by address and by name
 * (which the proxy then resolves).
 * A connection pinned to its name (plain HTTP that a transform rule will
 * add headers to: no certificate says who the server is) goes to an address
 * of that name too, whatever the lists say. */
#ifndef E2B_BACKEND_NET_EGRESS_ADMIT_H
#define E2B_BACKEND_NET_EGRESS_ADMIT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct event_base;
struct net_egress_env;
struct net_egress_lookup;

#define NET_EGRESS_LOOKUP_SECONDS 10
#define NET_EGRESS_PASS_SECONDS 60 /* how long an address-and-port pair stays open for the SYN */

enum net_egress_verdict {
	NET_EGRESS_GO,      /* to dst as asked */
	NET_EGRESS_REFUSED, /* err says what */
	NET_EGRESS_LOOKING, /* done will say, later (never from within the call) */
};

/* to: where to connect, or NULL when the name cannot be had (err says why,
 * status 0; NULL otherwise). */
typedef void (*net_egress_admitted)(void *ctx, const struct sockaddr_in *to, const struct err *err);

/* Makes the resolver (from /etc/resolv.conf); -1 when it has no nameserver. */
int net_egress_admit_init(struct event_base *base);
void net_egress_admit_shutdown(void);

/* For a connection of env's sandbox to dst whose server name is name (NULL:
 * none could be read), pinned or not. With LOOKING, *lookup is the lookup
 * under way, for net_egress_lookup_cancel until done is called. */
enum net_egress_verdict net_egress_admit(struct net_egress_env *env, const struct sockaddr_in *dst,
	const char *name, bool pin, net_egress_admitted done, void *ctx, struct net_egress_lookup **lookup,
	struct err *err);
/* Resolves name for a connection that asked for asked (its address is
 * preferred when the name has it; the answer gets its port); open: let the
 * answer past denyOut (net_nft_allow_upstream). done is called later, never
 * from within. NULL with err. */
struct net_egress_lookup *net_egress_lookup(struct net_egress_env *env, const char *name,
	const struct sockaddr_in *asked, bool open, net_egress_admitted done, void *ctx, struct err *err);
/* done will not be called. */
void net_egress_lookup_cancel(struct net_egress_lookup *l);

#endif
