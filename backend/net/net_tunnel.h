/* E2B's network.egressProxy: a SOCKS5 proxy the user names, through which
 * a sandbox's outbound TCP is tunneled (net_egress.h does it), as given on
 * create or updateNetwork: "host:port" with an optional username and
 * password. Pure: parsed and checked, no I/O. */
#ifndef E2B_BACKEND_NET_TUNNEL_H
#define E2B_BACKEND_NET_TUNNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct err;

struct net_tunnel {
	bool set;
	char host[256]; /* a DNS name (lower-cased) or an IPv4 literal */
	uint16_t port;
	char *user, *pass; /* NULL when not given; pass is wiped when freed */
};

/* obj: the egressProxy value (NULL or JSON null: none). -1 with the 400
 * message in err (which never quotes a password), nothing to free. */
int net_tunnel_parse(const struct cJSON *obj, struct net_tunnel *out, struct err *err);
void net_tunnel_free(struct net_tunnel *t);
/* {"address","username"?}: what getInfo shows (never the password). */
struct cJSON *net_tunnel_to_json(const struct net_tunnel *t);

#endif
