/* A sandbox's network interface: one veth pair made with rtnetlink. The
 * sandbox's end is "eth0" in its network namespace with the sandbox's
 * address and a default route through the other end, which lives in the
 * backend's namespace under a name of the backend's (net_pool.h) with no
 * interface address (net_link.c says why): routes to the sandbox's address
 * and to the gateway's (a local one). Both ends vanish with the sandbox's
 * namespace, and their routes with them. */
#ifndef E2B_BACKEND_NET_LINK_H
#define E2B_BACKEND_NET_LINK_H

#include <stdint.h>

struct err;

#define NET_LINK_SANDBOX_NAME "eth0"

/* sandbox_fd: an rtnetlink socket made inside the sandbox's namespace;
 * host_fd: one in the backend's, whose namespace file host_ns_fd is.
 * Addresses in host byte order, on a /prefix of their own. 0, or -1 with
 * err naming the step that failed (status its errno). */
int net_link_attach(int sandbox_fd, int host_fd, int host_ns_fd, const char *host_ifname, uint32_t host_ip,
	uint32_t sandbox_ip, int prefix, struct err *err);

#endif
