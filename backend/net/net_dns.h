/* The DNS relay of a sandbox. Its sockets (UDP and TCP on
 * NET_DNS_ADDRESS:53) are made inside the sandbox's network namespace, so
 * nothing of the host is exposed to it; queries are passed on from the
 * backend's namespace to the resolvers of the backend's /etc/resolv.conf
 * (read at start), which is why a resolver on the host's own loopback
 * (systemd-resolved's 127.0.0.53) works. Messages are relayed unchanged.
 * A sandbox that may send nothing anywhere gets REFUSED (UDP) or a closed
 * connection (TCP): DNS is egress too. */
#ifndef E2B_BACKEND_NET_DNS_H
#define E2B_BACKEND_NET_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct net_dns;

#define NET_DNS_ADDRESS "127.0.0.53"
#define NET_DNS_MAX_PENDING 32 /* UDP queries in flight per sandbox */
#define NET_DNS_MAX_TCP 8      /* TCP connections per sandbox */
/* The same for all sandboxes together: each holds a descriptor (two for
 * TCP), and the backend's HTTP connections need theirs. */
#define NET_DNS_MAX_PENDING_ALL 256
#define NET_DNS_MAX_TCP_ALL 64

/* Reads the upstream resolvers; 0, or -1 when none can be used. */
int net_dns_init(struct event_base *base);
/* A relay on two bound sockets (UDP, TCP listening) it takes over. *refuse
 * is read at each query. NULL on failure (the sockets are closed). */
struct net_dns *net_dns_open(int udp_fd, int tcp_fd, const bool *refuse);
void net_dns_close(struct net_dns *d);
/* How many upstream resolvers there are. */
int net_dns_upstreams(void);

#endif
