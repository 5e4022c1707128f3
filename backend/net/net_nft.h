/* The backend's nftables table, through libnftables (nft's own syntax, one
 * transaction per call): `inet e2b_local_<pid>`, made at start, deleted at
 * exit, and deleted by the next backend if this one died. It holds the rules
 * every sandbox shares (what is never reachable, the LAN ranges blocked by
 * default, the connection cap, no input to the host, NAT out) and one chain
 * per sandbox that has allowOut/denyOut rules, jumped to through a verdict
 * map keyed by the name of the sandbox's veth end, with a set of the
 * address-and-port pairs the egress proxy connects to for the names its
 * allowOut domains allow. The ruleset is printed in docs/backend/networking.md
 * ("NAT and the nftables table"). */
#ifndef E2B_BACKEND_NET_NFT_H
#define E2B_BACKEND_NET_NFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct net_policy;

struct net_nft_config {
	const char *ifprefix; /* every sandbox's veth end starts with it */
	const char *subnet;   /* "a.b.c.d/n": all sandboxes of every backend */
	const char *block;    /* this backend's part of it */
	int conn_limit;       /* tracked connections per sandbox */
};

/* Removes the tables of dead backends, then makes this one's. -1 with err. */
int net_nft_init(const struct net_nft_config *c, struct err *err);
/* What exists of one sandbox's rules in the table. */
struct net_nft_sandbox {
	bool chain; /* s<slot>, and its element in the sandboxes map */
	bool set;   /* p<slot>: where the egress proxy goes for allowOut's domains */
};

/* Replaces the sandbox's rules (slot numbers its chain and set); the set of
 * the proxy's destinations starts empty. 0, or -1 with err. */
int net_nft_apply(int slot, const char *ifname, const struct net_policy *p, struct net_nft_sandbox *has,
	struct err *err);
/* Lets the sandbox's new connections to addr:port (host byte order) pass
 * its denyOut for the next seconds: the egress proxy's, to an address it
 * resolved for a name allowOut allows. */
int net_nft_allow_upstream(int slot, uint32_t addr, uint16_t port, int seconds);
/* Drops the sandbox's chain and set (those it has). */
void net_nft_forget(int slot, const char *ifname, const struct net_nft_sandbox *has);
/* Deletes the table. */
void net_nft_shutdown(void);

#endif
