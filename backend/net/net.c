/* Sandbox networking: start, each sandbox's attach, update and detach
 * (net.h). Transform rules and allowOut's domain names take the sandbox's
 * egress proxy (net_egress.h). */
#define _GNU_SOURCE
#include "net/net.h"

#include "lib/err.h"
#include "net/net_dns.h"
#include "net/net_egress.h"
#include "net/net_link.h"
#include "net/net_nft.h"
#include "net/net_policy.h"
#include "net/net_pool.h"
#include "net/net_rtnl.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct sandbox_net {
	int slot;
	char ifname[IFNAMSIZ];
	struct net_policy policy;
	struct net_nft_sandbox nft; /* what exists of its rules in the table */
	bool refuse_dns;            /* nothing may leave: DNS neither */
	struct net_dns *dns;
	struct net_egress *egress; /* with transform rules or allowOut domains: its proxy */
};

static struct {
	bool on;
	int rtnl;    /* rtnetlink in the backend's namespace */
	int self_ns; /* the backend's network namespace */
	char ifprefix[12];
} g = {.rtnl = -1, .self_ns = -1};
static pthread_mutex_t rtnl_lock = PTHREAD_MUTEX_INITIALIZER; /* g.rtnl: the loop and a worker */

bool net_enabled(void)
{
	return g.on;
}

static int write_sysctl(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

static void cidr_text(struct net_cidr c, char *out, size_t n)
{
	struct in_addr in = {.s_addr = htonl(c.addr)};
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &in, a, sizeof a);
	snprintf(out, n, "%s/%d", a, c.prefix);
}

/* "e2b" and the pid in base 36 (at most 5 characters), then "-": with a
 * slot in hex the name stays within IFNAMSIZ and names its backend. */
static void make_ifprefix(void)
{
	char digits[8];
	int n = 0;
	unsigned long pid = (unsigned long)getpid();
	do
		digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[pid % 36];
	while ((pid /= 36) && n < 7);
	int k = snprintf(g.ifprefix, sizeof g.ifprefix, "e2b");
	while (n > 0 && k < (int)sizeof g.ifprefix - 2)
		g.ifprefix[k++] = digits[--n];
	g.ifprefix[k++] = '-';
	g.ifprefix[k] = '\0';
}

int net_init(struct event_base *base, const struct net_options *o)
{
	if (!runtime_isolated() || o->off)
		return 0;
	struct err why;
	err_clear(&why);
	struct net_cidr subnet;
	if (net_pool_parse_subnet(o->subnet ? o->subnet : NET_POOL_DEFAULT_SUBNET, &subnet) != 0) {
		err_set(&why, EINVAL, "bad sandbox subnet");
		goto fail;
	}
	make_ifprefix();
	g.rtnl = net_rtnl_open();
	g.self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (g.rtnl < 0 || g.self_ns < 0) {
		err_set(&why, errno, "no rtnetlink: %s", strerror(errno));
		goto fail;
	}
	/* Forwarding is what lets sandboxes out: in the host's namespace this
	 * is a host-wide setting (Docker turns it on the same way). */
	if (write_sysctl("/proc/sys/net/ipv4/ip_forward", "1") != 0) {
		err_set(&why, errno, "cannot turn on net.ipv4.ip_forward: %s", strerror(errno));
		goto fail;
	}
	if (net_pool_claim(g.rtnl, subnet, (int)o->max_sandboxes, &why) != 0)
		goto fail;
	char sub[32], block[32];
	cidr_text(net_pool_subnet(), sub, sizeof sub);
	cidr_text(net_pool_block(), block, sizeof block);
	struct net_nft_config nc = {.ifprefix = g.ifprefix,
		.subnet = sub,
		.block = block,
		.conn_limit = (int)o->conn_limit};
	if (net_nft_init(&nc, &why) != 0 || net_dns_init(base) != 0 ||
		net_egress_init(base, o->egress_ca_dir, o->egress_ca_file, &why) != 0)
		goto fail;
	g.on = true;
	fprintf(stderr,
		"e2b-local-backend: sandbox network %s (of %s), interfaces %s*, %d DNS "
		"resolver(s)\n",
		block, sub, g.ifprefix, net_dns_upstreams());
	return 0;
fail:
	fprintf(stderr, "e2b-local-backend: cannot set up sandbox networking: %.511s\n", why.msg);
	net_shutdown();
	return -1;
}

void net_shutdown(void)
{
	net_egress_shutdown();
	net_nft_shutdown();
	if (g.rtnl >= 0)
		net_pool_release(g.rtnl);
	if (g.rtnl >= 0)
		close(g.rtnl);
	if (g.self_ns >= 0)
		close(g.self_ns);
	g.rtnl = g.self_ns = -1;
	g.on = false;
}

/* --- one sandbox ------------------------------------------------------------ */

static void slot_name(int slot, char *out)
{
	/* prefix: at most 10 characters; a slot: at most 4 hex digits (65536). */
	snprintf(out, IFNAMSIZ, "%.10s%x", g.ifprefix, (unsigned)slot & 0xffff);
}

/* A slot whose interface is still there (its sandbox's namespace is still
 * being torn down by the kernel) waits. */
static bool slot_usable(int slot, void *arg)
{
	(void)arg;
	char name[IFNAMSIZ];
	slot_name(slot, name);
	return if_nametoindex(name) == 0;
}

/* The relay's sockets, bound inside the sandbox. */
/* The relay's two sockets, made in the sandbox's namespace on its side of
 * the veth. */
static int dns_sockets(struct sandbox *sb, int *udp_out, int *tcp_out)
{
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(53)};
	inet_pton(AF_INET, NET_DNS_ADDRESS, &at.sin_addr);
	int udp = runtime_socket(sb, AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int tcp = runtime_socket(sb, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int one = 1;
	if (udp < 0 || tcp < 0 || bind(udp, (struct sockaddr *)&at, sizeof at) != 0 ||
		setsockopt(tcp, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
		bind(tcp, (struct sockaddr *)&at, sizeof at) != 0 || listen(tcp, 16) != 0) {
		int err = errno;
		if (udp >= 0)
			close(udp);
		if (tcp >= 0)
			close(tcp);
		errno = err;
		return -1;
	}
	*udp_out = udp;
	*tcp_out = tcp;
	return 0;
}

/* /etc/resolv.conf names the relay. The template's file is rewritten (an
 * overlay copy-up keeps its owner); a missing one or a link is replaced by
 * a file owned like /etc. */
static int write_resolv_conf(struct sandbox *sb)
{
	static const char text[] = "# the local backend's DNS relay (docs/backend/networking.md, DNS)\n"
				   "nameserver " NET_DNS_ADDRESS "\n";
	int fd = runtime_open_in_root(sb, "/etc/resolv.conf", O_WRONLY | O_TRUNC | O_NOFOLLOW);
	if (fd < 0) {
		int etc = runtime_open_in_root(sb, "/etc", O_PATH | O_DIRECTORY);
		struct stat st;
		if (etc < 0 || fstat(etc, &st) != 0) {
			if (etc >= 0)
				close(etc);
			return -1;
		}
		unlinkat(etc, "resolv.conf", 0);
		fd = openat(etc, "resolv.conf", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 && fchown(fd, st.st_uid, st.st_gid) != 0) {
			close(fd);
			fd = -1;
		}
		close(etc);
		if (fd < 0)
			return -1;
	}
	ssize_t w = write(fd, text, sizeof text - 1);
	close(fd);
	return w == (ssize_t)(sizeof text - 1) ? 0 : -1;
}

static void net_free(struct sandbox_net *n)
{
	net_dns_close(n->dns);
	net_policy_free(&n->policy);
	net_pool_put(n->slot);
	free(n);
}

struct net_attach {
	struct sandbox *sb;
	struct sandbox_net *n;
	int udp, tcp;   /* the relay's sockets, once made */
	int rc;         /* net_sandbox_attach_work's: 0, or -1 with err */
	struct err err; /* the step that failed (status its errno) */
};

int net_sandbox_attach_begin(struct sandbox *sb, struct net_policy *policy, struct net_attach **out,
	struct err *err)
{
	*out = NULL;
	if (!g.on) {
		net_policy_free(policy);
		return 0;
	}
	struct sandbox_net *n = calloc(1, sizeof *n);
	struct net_attach *a = calloc(1, sizeof *a);
	if (!n || !a) {
		free(n);
		free(a);
		net_policy_free(policy);
		err_set(err, 0, "out of memory");
		return -1;
	}
	n->policy = *policy;
	memset(policy, 0, sizeof *policy);
	n->refuse_dns = net_policy_blocks_all(&n->policy);
	n->slot = net_pool_take(slot_usable, NULL);
	if (n->slot < 0) {
		err_set(err, 0, "no sandbox address left in this backend's block");
		net_free(n);
		free(a);
		return -1;
	}
	slot_name(n->slot, n->ifname);
	*a = (struct net_attach){.sb = sb, .n = n, .udp = -1, .tcp = -1};
	*out = a;
	return 0;
}

/* -1 with "cannot <step>: <errno's text>" in err. */
static int step_failed(struct err *err, const char *step)
{
	return err_set(err, errno, "cannot %s: %s", step, strerror(errno));
}

void net_sandbox_attach_work(struct net_attach *a)
{
	struct sandbox_net *n = a->n;
	int nl = runtime_socket(a->sb, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	int rc = nl < 0 ? step_failed(&a->err, "open rtnetlink in the sandbox") : 0;
	if (rc == 0) {
		/* The backend's rtnetlink socket (and the sequence of its
		 * messages) is one: a create on the loop may attach meanwhile. */
		pthread_mutex_lock(&rtnl_lock);
		rc = net_link_attach(nl, g.rtnl, g.self_ns, n->ifname, net_pool_host_ip(n->slot),
			net_pool_sandbox_ip(n->slot), 31, &a->err);
		pthread_mutex_unlock(&rtnl_lock);
		close(nl);
	}
	if (rc == 0 && dns_sockets(a->sb, &a->udp, &a->tcp) != 0)
		rc = step_failed(&a->err, "start its DNS relay");
	if (rc == 0 && write_resolv_conf(a->sb) != 0)
		rc = step_failed(&a->err, "write /etc/resolv.conf");
	a->rc = rc;
}

int net_sandbox_attach_end(struct net_attach *a, struct err *err)
{
	if (!a)
		return 0;
	struct sandbox_net *n = a->n;
	int rc = -1;
	if (a->rc != 0) {
		if (err)
			*err = a->err;
	} else {
		n->dns = net_dns_open(a->udp, a->tcp, &n->refuse_dns);
		a->udp = a->tcp = -1; /* the relay's now, or closed */
		if (!n->dns)
			err_set(err, errno, "cannot start its DNS relay: %s", strerror(errno));
		else
			rc = net_nft_apply(n->slot, n->ifname, &n->policy, &n->nft, err);
		if (rc == 0 && net_egress_wanted(&n->policy) &&
			!(n->egress = net_egress_start(a->sb, n->slot, &n->policy, err))) {
			net_nft_forget(n->slot, n->ifname, &n->nft);
			rc = -1;
		}
	}
	if (a->udp >= 0)
		close(a->udp);
	if (a->tcp >= 0)
		close(a->tcp);
	if (rc == 0)
		a->sb->net = n;
	else
		net_free(n);
	free(a);
	return rc;
}

int net_sandbox_attach(struct sandbox *sb, struct net_policy *policy, struct err *err)
{
	struct net_attach *a;
	if (net_sandbox_attach_begin(sb, policy, &a, err) != 0)
		return -1;
	if (a)
		net_sandbox_attach_work(a);
	return net_sandbox_attach_end(a, err);
}

int net_sandbox_update(struct sandbox *sb, struct net_policy *policy, struct err *err)
{
	struct sandbox_net *n = sb->net;
	if (!n) {
		net_policy_free(policy);
		return 0;
	}
	if (net_nft_apply(n->slot, n->ifname, policy, &n->nft, err) != 0) {
		net_policy_free(policy);
		return -1;
	}
	net_policy_free(&n->policy);
	n->policy = *policy;
	memset(policy, 0, sizeof *policy);
	n->refuse_dns = net_policy_blocks_all(&n->policy);
	bool wanted = net_egress_wanted(&n->policy);
	if (wanted && !n->egress)
		return (n->egress = net_egress_start(sb, n->slot, &n->policy, err)) ? 0 : -1;
	if (!wanted && n->egress) {
		net_egress_stop(n->egress, true);
		n->egress = NULL;
	}
	/* The old one is gone: the proxy reads the new one. */
	return n->egress ? net_egress_set_policy(n->egress, &n->policy, err) : 0;
}

void net_sandbox_to_json(const struct sandbox *sb, struct cJSON *network)
{
	if (sb->net)
		net_policy_to_json(&sb->net->policy, network);
}

static void on_removing(void *ctx, struct sandbox *sb)
{
	(void)ctx;
	struct sandbox_net *n = sb->net;
	if (!n)
		return;
	net_egress_stop(n->egress, false); /* its table goes with the namespace */
	n->egress = NULL;
	if (n->nft.chain)
		net_nft_forget(n->slot, n->ifname, &n->nft);
	/* The veth goes with the sandbox's namespace; until the kernel has
	 * removed it, slot_usable keeps the slot from being taken again. */
	sb->net = NULL;
	net_free(n);
}

/* Before a checkpoint: the veth goes (CRIU dumps no link whose other end
 * is outside the sandbox), with the relay's and the proxy's sockets in the
 * namespace that is about to end. Its slot (address), rules and policy stay
 * for the link made again after. */
static void unlink_sandbox(struct sandbox_net *n)
{
	net_egress_stop(n->egress, false);
	n->egress = NULL;
	net_dns_close(n->dns);
	n->dns = NULL;
	struct net_rtnl_batch *b = calloc(1, sizeof *b);
	if (!b)
		return;
	struct nlmsghdr *nlh = net_rtnl_add(b, RTM_DELLINK, 0);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, n->ifname);
	net_rtnl_end(b, nlh);
	pthread_mutex_lock(&rtnl_lock);
	int rc = net_rtnl_send(g.rtnl, b);
	pthread_mutex_unlock(&rtnl_lock);
	if (rc != 0 && rc != -ENODEV)
		fprintf(stderr, "e2b-local-backend: cannot remove link %s: %s\n", n->ifname, strerror(-rc));
	free(b);
}

/* The link, relay and proxy again, on the same address, in the namespace
 * the sandbox has now (the same after a failed dump, a restored one
 * after a restore). */
static void relink_sandbox(struct sandbox *sb, struct sandbox_net *n)
{
	struct net_attach a = {.sb = sb, .n = n, .udp = -1, .tcp = -1};
	net_sandbox_attach_work(&a);
	struct err *why = &a.err;
	int rc = a.rc;
	if (rc == 0) {
		n->dns = net_dns_open(a.udp, a.tcp, &n->refuse_dns);
		a.udp = a.tcp = -1;
		if (!n->dns)
			rc = err_set(why, errno, "its DNS relay: %s", strerror(errno));
		else if (net_egress_wanted(&n->policy) &&
			!(n->egress = net_egress_start(sb, n->slot, &n->policy, why)))
			rc = -1;
	}
	if (a.udp >= 0)
		close(a.udp);
	if (a.tcp >= 0)
		close(a.tcp);
	if (rc != 0)
		fprintf(stderr, "sandbox %s: its network after a checkpoint: %.255s\n", sb->id, why->msg);
}

static void on_checkpoint(void *ctx, struct sandbox *sb, enum registry_checkpoint_step step)
{
	struct sandbox_net *n = sb->net;
	if (!n)
		return;
	if (step == REGISTRY_CKPT_BEFORE)
		unlink_sandbox(n);
	else if (step == REGISTRY_CKPT_STOPPED)
		on_removing(ctx, sb); /* set up anew when it starts again */
	else
		relink_sandbox(sb, n);
}

void net_registry_hooks(struct registry_hooks *hooks)
{
	memset(hooks, 0, sizeof *hooks);
	hooks->removing = on_removing;
	hooks->checkpoint = on_checkpoint;
}
