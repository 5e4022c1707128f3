/* One sandbox's egress rules as E2B's API carries them (the create body's
 * allow_internet_access and network.allowOut/denyOut, and updateNetwork's
 * body), parsed, validated with E2B's messages and reduced to sorted,
 * disjoint IPv4 ranges. Pure: no I/O. */
#ifndef E2B_BACKEND_NET_POLICY_H
#define E2B_BACKEND_NET_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net_rules.h"
#include "net/net_tunnel.h"

struct cJSON;
struct err;

#define NET_POLICY_MAX_ENTRIES 256
#define NET_POLICY_ALL_TRAFFIC "0.0.0.0/0"

struct net_range {
	uint32_t first, last; /* host byte order, inclusive */
};

struct net_policy {
	int allow_internet_access; /* -1 not given, else 0/1 */
	struct net_range *allow, *deny;
	size_t n_allow, n_deny;
	char **domains; /* allowOut's domain names, lowercase ("*.x.y": below x.y) */
	size_t n_domains;
	struct cJSON *allow_out, *deny_out; /* the lists as given, or NULL */
	struct net_rules rules;             /* network.rules (net_rules_parse), none by default */
	struct net_tunnel tunnel;           /* network.egressProxy (net_tunnel_parse), unset by default */
};

/* The shared rules' ranges, one table for the nftables sets every sandbox
 * passes (net_nft.c) and the tunnel's checks in user space
 * (net_egress_admit.c): the user's LAN, reachable only through allowOut;
 * never reachable: "this" network, loopback, link-local (cloud metadata),
 * multicast and broadcast (and, on top, every sandbox's subnet). */
#define NET_POLICY_LAN_RANGES 4
#define NET_POLICY_NEVER_RANGES 4
extern const struct net_range net_policy_lan[NET_POLICY_LAN_RANGES];
extern const struct net_range net_policy_never[NET_POLICY_NEVER_RANGES];
bool net_policy_in_ranges(const struct net_range *r, size_t n, uint32_t addr);

/* allow_out / deny_out: arrays of strings or NULL. allowOut may name domains
 * (a DNS name, or "*." and one), which need denyOut to block everything, as
 * on E2B. On failure -1 with the 400 message in err and nothing to free. */
int net_policy_parse(const struct cJSON *allow_out, const struct cJSON *deny_out, int allow_internet_access,
	struct net_policy *out, struct err *err);
void net_policy_free(struct net_policy *p);
/* Nothing restricted, rewritten or tunneled: no list, no transform rule, no
 * egress proxy, and internet access not turned off. */
bool net_policy_is_open(const struct net_policy *p);
/* Nothing may leave at all (every destination denied, none allowed). */
bool net_policy_blocks_all(const struct net_policy *p);
/* Whether deny covers every IPv4 address (denyOut 0.0.0.0/0 or
 * allow_internet_access false). */
bool net_policy_denies_all(const struct net_policy *p);
/* Whether a server name (TLS SNI, HTTP Host) is one allowOut allows: an
 * exact domain, or a name below a "*." one (not the apex, as on E2B). */
bool net_policy_allows_name(const struct net_policy *p, const char *name);
/* Whether allowOut/denyOut let an IPv4 address (host byte order) through:
 * allowOut's addresses first, then denyOut's (what is never reachable and
 * the LAN are the shared rules' concern). */
bool net_policy_allows_address(const struct net_policy *p, uint32_t addr);
/* Adds "allowOut"/"denyOut", "rules" (as given) and "egressProxy" (without
 * its password) to a SandboxDetail's network object. */
void net_policy_to_json(const struct net_policy *p, struct cJSON *network);

#endif
