/* Route netlink (rtnetlink) over a plain socket, with libmnl building and
 * walking the messages: a batch of requests answered by one ack each, and
 * dumps. Synchronous: rtnetlink handles a request inside sendmsg(), so the
 * answers are queued by the time it returns and the event loop never waits
 * on the kernel for more than the work itself. */
#ifndef E2B_BACKEND_NET_RTNL_H
#define E2B_BACKEND_NET_RTNL_H

#include <stddef.h>
#include <stdint.h>

struct nlmsghdr;

#define NET_RTNL_BUF 8192

/* A batch of requests being built in one buffer. */
struct net_rtnl_batch {
	char buf[NET_RTNL_BUF];
	size_t len;
	int count;
	uint32_t seq;
};

/* A new rtnetlink socket in the caller's network namespace; -1 with errno. */
int net_rtnl_open(void);
/* Starts the next message of b (type, NLM_F_REQUEST|NLM_F_ACK|flags) and
 * returns it for libmnl's mnl_attr_put* and mnl_nlmsg_put_extra_header. */
struct nlmsghdr *net_rtnl_add(struct net_rtnl_batch *b, uint16_t type, uint16_t flags);
/* Closes the message started last (its length is final). */
void net_rtnl_end(struct net_rtnl_batch *b, struct nlmsghdr *nlh);
/* Sends b on fd and reads one ack per message: 0, or -errno of the first
 * request the kernel refused. */
int net_rtnl_send(int fd, struct net_rtnl_batch *b);
/* Sends one dump request (type, with a zeroed header of hdr_len bytes whose
 * first byte is family) and calls cb for every answer; 0 or -errno. */
int net_rtnl_dump(int fd, uint16_t type, size_t hdr_len, unsigned char family,
	void (*cb)(const struct nlmsghdr *nlh, void *arg), void *arg);

#endif
