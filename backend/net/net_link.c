/* The veth pair of a sandbox (net_link.h). Three batches: the pair is made
 * from inside the sandbox's namespace (its peer is placed in the backend's
 * at once), the backend's end goes up with its routes and neighbour, then
 * eth0 gets its address, neighbour and default route.
 *
 * The backend's end has no interface address: the gateway address is a
 * local route on it and the sandbox's a /32 route. An address added or
 * removed in the backend's namespace is a "network change" to every
 * browser on the host (Chromium's address tracker listens for them and
 * fails the connections it is opening with ERR_NETWORK_CHANGED), so a
 * sandbox's create or delete must not be one; routes and neighbours are
 * not watched. With no address to answer ARP for, both ends know each
 * other's MAC from permanent neighbour entries (the MACs are set here, so
 * udev's MAC policy leaves them alone). */
#define _GNU_SOURCE
#include "net/net_link.h"

#include "lib/err.h"
#include "net/net_rtnl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <sys/ioctl.h>

static void add_address(struct net_rtnl_batch *b, unsigned index, uint32_t ip, int prefix)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof *ifa);
	ifa->ifa_family = AF_INET;
	ifa->ifa_prefixlen = (unsigned char)prefix;
	ifa->ifa_index = index;
	uint32_t be = htonl(ip);
	mnl_attr_put_u32(nlh, IFA_LOCAL, be);
	mnl_attr_put_u32(nlh, IFA_ADDRESS, be);
	net_rtnl_end(b, nlh);
}

/* The MAC of the end holding ip: 02:e2 (locally administered, unicast) and
 * the address's four bytes, distinct for every end of this backend's block. */
static void put_mac(struct nlmsghdr *nlh, uint16_t type, uint32_t ip)
{
	unsigned char mac[6] = {0x02, 0xe2, (unsigned char)(ip >> 24), (unsigned char)(ip >> 16),
		(unsigned char)(ip >> 8), (unsigned char)ip};
	mnl_attr_put(nlh, type, sizeof mac, mac);
}

/* ip's neighbour entry on index: permanent, with put_mac's MAC for ip. */
static void add_neighbour(struct net_rtnl_batch *b, unsigned index, uint32_t ip)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE);
	struct ndmsg *nd = mnl_nlmsg_put_extra_header(nlh, sizeof *nd);
	nd->ndm_family = AF_INET;
	nd->ndm_ifindex = (int)index;
	nd->ndm_state = NUD_PERMANENT;
	nd->ndm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, NDA_DST, htonl(ip));
	put_mac(nlh, NDA_LLADDR, ip);
	net_rtnl_end(b, nlh);
}

/* A /32 route to ip through index: type local in the local table (the
 * gateway address, an address of the namespace without being an interface
 * address), or unicast in main with the gateway as its source. */
static void add_host_route(struct net_rtnl_batch *b, unsigned index, uint32_t ip, bool local, uint32_t src)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 32;
	rtm->rtm_table = local ? RT_TABLE_LOCAL : RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = local ? RT_SCOPE_HOST : RT_SCOPE_LINK;
	rtm->rtm_type = local ? RTN_LOCAL : RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_DST, htonl(ip));
	mnl_attr_put_u32(nlh, RTA_OIF, index);
	if (!local)
		mnl_attr_put_u32(nlh, RTA_PREFSRC, htonl(src));
	net_rtnl_end(b, nlh);
}

static void set_up(struct net_rtnl_batch *b, unsigned index)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
	ifi->ifi_index = (int)index;
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	net_rtnl_end(b, nlh);
}

/* IPv6 is not routed to sandboxes: no link-local address either (address
 * generation off before the link comes up), so a sandbox has no IPv6 but
 * loopback's, and nothing tries it. */
static void no_ipv6(struct net_rtnl_batch *b, unsigned index)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
	ifi->ifi_index = (int)index;
	struct nlattr *spec = mnl_attr_nest_start(nlh, IFLA_AF_SPEC);
	struct nlattr *inet6 = mnl_attr_nest_start(nlh, AF_INET6);
	mnl_attr_put_u8(nlh, IFLA_INET6_ADDR_GEN_MODE, IN6_ADDR_GEN_MODE_NONE);
	mnl_attr_nest_end(nlh, inet6);
	mnl_attr_nest_end(nlh, spec);
	net_rtnl_end(b, nlh);
}

static void add_default_route(struct net_rtnl_batch *b, unsigned index, uint32_t gateway)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL);
	struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
	rtm->rtm_family = AF_INET;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_UNICAST;
	rtm->rtm_flags = RTNH_F_ONLINK;
	mnl_attr_put_u32(nlh, RTA_GATEWAY, htonl(gateway));
	mnl_attr_put_u32(nlh, RTA_OIF, index);
	net_rtnl_end(b, nlh);
}

/* The pair, made in the namespace of the socket it is sent on. */
static void add_pair(struct net_rtnl_batch *b, const char *host_ifname, int host_ns_fd, uint32_t host_ip,
	uint32_t sandbox_ip)
{
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, NET_LINK_SANDBOX_NAME);
	put_mac(nlh, IFLA_ADDRESS, sandbox_ip);
	struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	struct nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	struct nlattr *peer = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg)); /* the peer's own header */
	mnl_attr_put_strz(nlh, IFLA_IFNAME, host_ifname);
	put_mac(nlh, IFLA_ADDRESS, host_ip);
	mnl_attr_put_u32(nlh, IFLA_NET_NS_FD, (uint32_t)host_ns_fd);
	mnl_attr_nest_end(nlh, peer);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	net_rtnl_end(b, nlh);
}

/* The index of name in the namespace of socket fd (any socket answers
 * SIOCGIFINDEX for its own namespace). */
static unsigned index_in(int fd, const char *name)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
	return ioctl(fd, SIOCGIFINDEX, &ifr) == 0 ? (unsigned)ifr.ifr_ifindex : 0;
}

/* -1 with "cannot <step>: <what -rc says>" in err. */
static int step_failed(struct err *err, const char *step, int rc)
{
	return err_set(err, -rc, "cannot %s: %s", step, strerror(-rc));
}

int net_link_attach(int sandbox_fd, int host_fd, int host_ns_fd, const char *host_ifname, uint32_t host_ip,
	uint32_t sandbox_ip, int prefix, struct err *err)
{
	struct net_rtnl_batch b = {0};
	add_pair(&b, host_ifname, host_ns_fd, host_ip, sandbox_ip);
	int rc = net_rtnl_send(sandbox_fd, &b);
	unsigned host_index = rc ? 0 : index_in(host_fd, host_ifname);
	unsigned eth0 = rc ? 0 : index_in(sandbox_fd, NET_LINK_SANDBOX_NAME);
	if (rc == 0 && (!host_index || !eth0))
		rc = -ENODEV;
	if (rc)
		return step_failed(err, "create the veth pair", rc);
	no_ipv6(&b, host_index);
	set_up(&b, host_index); /* before its routes: a route needs its link up */
	add_host_route(&b, host_index, host_ip, true, 0);
	add_host_route(&b, host_index, sandbox_ip, false, host_ip);
	add_neighbour(&b, host_index, sandbox_ip);
	if ((rc = net_rtnl_send(host_fd, &b)))
		return step_failed(err, "configure the backend's end", rc);
	add_address(&b, eth0, sandbox_ip, prefix);
	no_ipv6(&b, eth0);
	set_up(&b, eth0);
	add_neighbour(&b, eth0, host_ip);
	add_default_route(&b, eth0, host_ip);
	if ((rc = net_rtnl_send(sandbox_fd, &b)))
		return step_failed(err, "configure eth0", rc);
	return 0;
}
