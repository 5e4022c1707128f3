/* The addresses of this backend's sandboxes: a block of the sandbox subnet
 * (--sandbox-subnet, default 100.96.0.0/16) that no route of the backend's
 * namespace uses, claimed with a blackhole route (protocol NET_POOL_PROTO,
 * metric = the backend's pid) so that backends sharing a namespace take
 * different blocks, and so that addresses of the block no sandbox holds
 * lead nowhere. Each sandbox gets a /31 of it: the even address for the
 * backend's end of its veth, the odd one for eth0. A claim whose backend is
 * dead is removed by the next backend that looks. */
#ifndef E2B_BACKEND_NET_POOL_H
#define E2B_BACKEND_NET_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;

#define NET_POOL_DEFAULT_SUBNET "100.96.0.0/16"
#define NET_POOL_PROTO 226 /* rtm_protocol of a claim: none of iproute2's names */

struct net_cidr {
	uint32_t addr; /* host byte order, host bits cleared */
	int prefix;
};

/* "a.b.c.d/n" (n 8..30 for a pool); -1 if not. */
int net_pool_parse_subnet(const char *text, struct net_cidr *out);
/* Whether addr (host byte order) is in c. */
bool net_cidr_contains(struct net_cidr c, uint32_t addr);
/* Claims a block for max_sandboxes sandboxes on rtnetlink socket fd (under a
 * lock file shared by the backends of this machine). -1 with err filled. */
int net_pool_claim(int fd, struct net_cidr subnet, int max_sandboxes, struct err *err);
/* The claimed block, and the whole subnet. */
struct net_cidr net_pool_block(void);
struct net_cidr net_pool_subnet(void);
/* Takes the next free slot (next-fit, so a slot is reused as late as
 * possible); usable(slot) may veto one (its interface still exists). -1 when
 * none is left. */
int net_pool_take(bool (*usable)(int slot, void *arg), void *arg);
void net_pool_put(int slot);
uint32_t net_pool_host_ip(int slot);
uint32_t net_pool_sandbox_ip(int slot);
/* Drops the claim route. */
void net_pool_release(int fd);

#endif
