/* Address blocks and slots (net_pool.h). */
#define _GNU_SOURCE
#include "net/net_pool.h"

#include "lib/err.h"
#include "net/net_rtnl.h"
#include "runtime/runtime_leftovers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define LOCK_PATH "/run/lock/e2b-local-net.lock"

static struct {
	struct net_cidr subnet, block;
	unsigned char *used; /* one byte per slot */
	int slots, next;
	bool claimed;
} pool;

static uint32_t mask_of(int prefix)
{
	return prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);
}

int net_pool_parse_subnet(const char *text, struct net_cidr *out)
{
	char addr[32];
	const char *slash = strchr(text, '/');
	if (!slash || (size_t)(slash - text) >= sizeof addr)
		return -1;
	memcpy(addr, text, (size_t)(slash - text));
	addr[slash - text] = '\0';
	char *end = NULL;
	long prefix = strtol(slash + 1, &end, 10);
	struct in_addr in;
	if (!slash[1] || *end || prefix < 8 || prefix > 30 || inet_pton(AF_INET, addr, &in) != 1)
		return -1;
	out->prefix = (int)prefix;
	out->addr = ntohl(in.s_addr) & mask_of(out->prefix);
	return 0;
}

bool net_cidr_contains(struct net_cidr c, uint32_t addr)
{
	return ((c.addr ^ addr) & mask_of(c.prefix)) == 0;
}

static bool overlaps(struct net_cidr a, struct net_cidr b)
{
	int p = a.prefix < b.prefix ? a.prefix : b.prefix;
	return ((a.addr ^ b.addr) & mask_of(p)) == 0;
}

/* Every IPv4 route of the namespace, as the scan below needs it. */
struct route {
	struct net_cidr dst;
	bool claim; /* a backend's block */
	pid_t owner;
	uint32_t table;
};
struct routes {
	struct route *items;
	size_t n, cap;
};

static void collect(const struct nlmsghdr *nlh, void *arg)
{
	struct routes *rs = arg;
	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	if (rtm->rtm_family != AF_INET || rtm->rtm_dst_len == 0)
		return; /* default routes say nothing about the subnet */
	struct route r = {.dst.prefix = rtm->rtm_dst_len, .table = rtm->rtm_table};
	const struct nlattr *a;
	mnl_attr_for_each(a, nlh, sizeof *rtm)
	{
		switch (mnl_attr_get_type(a)) {
		case RTA_DST:
			r.dst.addr = ntohl(mnl_attr_get_u32(a));
			break;
		case RTA_PRIORITY:
			r.owner = (pid_t)mnl_attr_get_u32(a);
			break;
		case RTA_TABLE:
			r.table = mnl_attr_get_u32(a);
			break;
		}
	}
	r.claim = rtm->rtm_type == RTN_BLACKHOLE && rtm->rtm_protocol == NET_POOL_PROTO;
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct route *items = realloc(rs->items, cap * sizeof *items);
		if (!items)
			return;
		rs->items = items;
		rs->cap = cap;
	}
	rs->items[rs->n++] = r;
}

/* Adds (or deletes) the claim route for block. */
static int claim_route(int fd, struct net_cidr block, pid_t owner, bool add)
{
	struct net_rtnl_batch b = {0};
	struct nlmsghdr *nlh =
		net_rtnl_add(&b, add ? RTM_NEWROUTE : RTM_DELROUTE, add ? NLM_F_CREATE | NLM_F_EXCL : 0);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = (unsigned char)block.prefix;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = NET_POOL_PROTO;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_BLACKHOLE;
	mnl_attr_put_u32(nlh, RTA_DST, htonl(block.addr));
	mnl_attr_put_u32(nlh, RTA_PRIORITY, (uint32_t)owner);
	net_rtnl_end(&b, nlh);
	return net_rtnl_send(fd, &b);
}

static void format_cidr(struct net_cidr c, char *out, size_t n)
{
	struct in_addr in = {.s_addr = htonl(c.addr)};
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &in, a, sizeof a);
	snprintf(out, n, "%s/%d", a, c.prefix);
}

/* Removes every claim in subnet of a backend that is gone. All of them, not
 * only those in the blocks the scan below reaches: a dead backend's sandbox
 * routes outlive it for a moment (the kernel tears a namespace down later),
 * and a block they still hold must not keep its stale claim forever. */
static void remove_stale_claims(int fd, struct net_cidr subnet, struct routes *rs)
{
	for (size_t k = 0; k < rs->n; k++) {
		struct route *r = &rs->items[k];
		if (!r->claim || r->dst.prefix == 0 || !overlaps(r->dst, subnet) || r->owner == getpid() ||
			runtime_backend_alive(r->owner))
			continue;
		char text[32];
		format_cidr(r->dst, text, sizeof text);
		fprintf(stderr, "e2b-local-backend: removing the address claim %s left by backend %d\n", text,
			(int)r->owner);
		int err = claim_route(fd, r->dst, r->owner, false);
		if (err)
			fprintf(stderr, "e2b-local-backend: cannot remove it: %s\n", strerror(-err));
		r->dst.prefix = 0;
	}
}

/* The first block of the subnet that no route overlaps. */
static int pick_block(int fd, struct net_cidr subnet, int block_prefix, struct net_cidr *out, struct err *err)
{
	struct routes rs = {0};
	int rc = net_rtnl_dump(fd, RTM_GETROUTE, sizeof(struct rtmsg), AF_INET, collect, &rs);
	if (rc) {
		err_set(err, 0, "cannot list the routes: %s", strerror(-rc));
		free(rs.items);
		return -1;
	}
	remove_stale_claims(fd, subnet, &rs);
	const struct route *blocker = NULL;
	uint32_t count = 1u << (block_prefix - subnet.prefix);
	for (uint32_t i = 0; i < count; i++) {
		struct net_cidr block = {subnet.addr + (i << (32 - block_prefix)), block_prefix};
		bool free_block = true;
		for (size_t k = 0; k < rs.n && free_block; k++) {
			struct route *r = &rs.items[k];
			if (r->dst.prefix == 0 || !overlaps(r->dst, block))
				continue;
			free_block = false;
			if (!r->claim && !blocker)
				blocker = r;
		}
		if (free_block) {
			*out = block;
			free(rs.items);
			return 0;
		}
	}
	char sub[32], route[32] = "";
	format_cidr(subnet, sub, sizeof sub);
	if (blocker)
		format_cidr(blocker->dst, route, sizeof route);
	err_set(err, 0,
		"no free block of %d addresses in the sandbox subnet %s%s%s%s "
		"(choose another with --sandbox-subnet)",
		1 << (32 - block_prefix), sub, blocker ? ": it overlaps the route " : "", route,
		blocker ? " of this host" : "");
	free(rs.items);
	return -1;
}

int net_pool_claim(int fd, struct net_cidr subnet, int max_sandboxes, struct err *err)
{
	/* At least a /24, and room for max_sandboxes /31s if the subnet has it. */
	int block_prefix = 24;
	while ((1L << (31 - block_prefix)) < max_sandboxes && block_prefix > subnet.prefix)
		block_prefix--;
	if (block_prefix < subnet.prefix)
		block_prefix = subnet.prefix;
	pool.subnet = subnet;
	pool.slots = 1 << (31 - block_prefix);
	if (pool.slots > 65536)
		pool.slots = 65536; /* slot numbers are 4 hex digits of an interface name */
	pool.used = calloc((size_t)pool.slots, 1);
	if (!pool.used) {
		err_set(err, 0, "out of memory");
		return -1;
	}
	/* One backend at a time between looking at the routes and claiming. */
	int lock = open(LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0)
		lock = open("/tmp/e2b-local-net.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock >= 0)
		flock(lock, LOCK_EX);
	int rc = pick_block(fd, subnet, block_prefix, &pool.block, err);
	if (rc == 0) {
		int en = claim_route(fd, pool.block, getpid(), true);
		if (en) {
			err_set(err, -en, "cannot claim addresses with a route: %s", strerror(-en));
			rc = -1;
		}
	}
	if (lock >= 0)
		close(lock);
	pool.claimed = rc == 0;
	return rc;
}

struct net_cidr net_pool_block(void)
{
	return pool.block;
}

struct net_cidr net_pool_subnet(void)
{
	return pool.subnet;
}

int net_pool_take(bool (*usable)(int slot, void *arg), void *arg)
{
	for (int tried = 0; tried < pool.slots; tried++) {
		int slot = pool.next;
		pool.next = (pool.next + 1) % pool.slots;
		if (!pool.used[slot] && usable(slot, arg)) {
			pool.used[slot] = 1;
			return slot;
		}
	}
	return -1;
}

void net_pool_put(int slot)
{
	if (slot >= 0 && slot < pool.slots)
		pool.used[slot] = 0;
}

uint32_t net_pool_host_ip(int slot)
{
	return pool.block.addr + 2u * (uint32_t)slot;
}

uint32_t net_pool_sandbox_ip(int slot)
{
	return net_pool_host_ip(slot) + 1;
}

void net_pool_release(int fd)
{
	if (pool.claimed) {
		int err = claim_route(fd, pool.block, getpid(), false);
		if (err) {
			char text[32];
			format_cidr(pool.block, text, sizeof text);
			fprintf(stderr, "e2b-local-backend: cannot remove the address claim %s: %s\n", text,
				strerror(-err));
		}
	}
	pool.claimed = false;
	free(pool.used);
	pool.used = NULL;
}
