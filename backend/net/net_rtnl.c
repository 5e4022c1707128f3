/* rtnetlink batches and dumps (net_rtnl.h). */
#include "net/net_rtnl.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int net_rtnl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -1;
	struct sockaddr_nl local = {.nl_family = AF_NETLINK};
	if (bind(fd, (struct sockaddr *)&local, sizeof local) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Sequence numbers never repeat within a process, so a late answer to an
 * earlier request (one that gave up half-way) is never taken for a new one. */
static uint32_t take_seq(uint32_t count)
{
	static uint32_t next;
	uint32_t zero = 0;
	__atomic_compare_exchange_n(&next, &zero, (uint32_t)time(NULL) << 8 | 1, false, __ATOMIC_RELAXED,
		__ATOMIC_RELAXED);
	return __atomic_fetch_add(&next, count ? count : 1, __ATOMIC_RELAXED); /* any thread */
}

struct nlmsghdr *net_rtnl_add(struct net_rtnl_batch *b, uint16_t type, uint16_t flags)
{
	if (b->count == 0 && b->seq == 0)
		b->seq = take_seq(NET_RTNL_BUF / sizeof(struct nlmsghdr)); /* room for a full batch */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(b->buf + b->len);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = b->seq + (uint32_t)b->count;
	return nlh;
}

void net_rtnl_end(struct net_rtnl_batch *b, struct nlmsghdr *nlh)
{
	b->len += MNL_ALIGN(nlh->nlmsg_len);
	b->count++;
}

/* One recv() into buf; -errno on failure. */
static ssize_t receive(int fd, char *buf, size_t cap)
{
	for (;;) {
		ssize_t n = recv(fd, buf, cap, 0);
		if (n >= 0 || errno != EINTR)
			return n < 0 ? -errno : n;
	}
}

int net_rtnl_send(int fd, struct net_rtnl_batch *b)
{
	ssize_t sent;
	do
		sent = send(fd, b->buf, b->len, 0);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -errno;
	int acks = 0, first_error = 0;
	char buf[NET_RTNL_BUF];
	while (acks < b->count) {
		ssize_t n = receive(fd, buf, sizeof buf);
		if (n <= 0)
			return n < 0 ? (int)n : -EPROTO;
		int len = (int)n;
		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
			nlh = mnl_nlmsg_next(nlh, &len)) {
			if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_seq < b->seq ||
				nlh->nlmsg_seq >= b->seq + (uint32_t)b->count)
				continue; /* an answer to an earlier batch that failed half-way */
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
			if (e->error && !first_error)
				first_error = e->error;
			acks++;
		}
	}
	b->seq = 0;
	b->count = 0;
	b->len = 0;
	return first_error;
}

int net_rtnl_dump(int fd, uint16_t type, size_t hdr_len, unsigned char family,
	void (*cb)(const struct nlmsghdr *nlh, void *arg), void *arg)
{
	struct net_rtnl_batch b = {.seq = take_seq(1)};
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(b.buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = b.seq;
	unsigned char *hdr = mnl_nlmsg_put_extra_header(nlh, hdr_len);
	hdr[0] = family;
	if (send(fd, b.buf, nlh->nlmsg_len, 0) < 0)
		return -errno;
	static char buf[1 << 16]; /* dumps come in large pieces; the loop is single-threaded */
	for (;;) {
		ssize_t n = receive(fd, buf, sizeof buf);
		if (n <= 0)
			return n < 0 ? (int)n : -EPROTO;
		int len = (int)n;
		for (const struct nlmsghdr *m = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(m, len);
			m = mnl_nlmsg_next(m, &len)) {
			if (m->nlmsg_seq != b.seq)
				continue;
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(m);
				return e->error ? e->error : -EPROTO;
			}
			cb(m, arg);
		}
	}
}
