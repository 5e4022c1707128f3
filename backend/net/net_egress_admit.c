/* allowOut's domain names at the egress proxy (net_egress_admit.h). */
#define _GNU_SOURCE
#include "net/net_egress_admit.h"

#include "lib/err.h"
#include "net/net_egress_conn.h"
#include "net/net_nft.h"
#include "net/net_policy.h"
#include "net/net_pool.h"

#include <arpa/inet.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct net_egress_lookup {
	struct net_egress_env *env;
	struct evdns_getaddrinfo_request *req; /* while the resolver has it */
	struct event *ev;                      /* the timeout, and the way back to the loop */
	struct sockaddr_in asked;              /* its address is preferred; its port is the answer's */
	char name[256];
	int result; /* the resolver's, once it answered */
	bool answered, found;
	bool open; /* past denyOut: the sandbox's chain must let it through */
	struct sockaddr_in to;
	net_egress_admitted done;
	void *ctx;
};

static struct evdns_base *dns;

int net_egress_admit_init(struct event_base *base)
{
	/* The backend's nameservers, as its DNS relay uses them; not its hosts
	 * file, which the sandbox's own lookups never see either. */
	dns = evdns_base_new(base, EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	if (!dns)
		return -1;
	if (evdns_base_resolv_conf_parse(dns,
		    DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC | DNS_OPTION_NAMESERVERS_NO_DEFAULT,
		    "/etc/resolv.conf") != 0 ||
		evdns_base_count_nameservers(dns) == 0) {
		net_egress_admit_shutdown();
		return -1;
	}
	return 0;
}

void net_egress_admit_shutdown(void)
{
	if (dns)
		evdns_base_free(dns, 1);
	dns = NULL;
}

static void lookup_free(struct net_egress_lookup *l)
{
	if (l->ev)
		event_free(l->ev);
	free(l);
}

/* The answer's address to use: the one asked for when it is among them,
 * else the first. */
static bool pick(struct net_egress_lookup *l, const struct evutil_addrinfo *ai)
{
	const struct sockaddr_in *first = NULL;
	for (; ai; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET || ai->ai_addrlen < sizeof(struct sockaddr_in))
			continue;
		const struct sockaddr_in *a = (const struct sockaddr_in *)ai->ai_addr;
		if (!first)
			first = a;
		if (a->sin_addr.s_addr == l->asked.sin_addr.s_addr) {
			first = a;
			break;
		}
	}
	if (!first)
		return false;
	l->to = (struct sockaddr_in){.sin_family = AF_INET,
		.sin_addr = first->sin_addr,
		.sin_port = l->asked.sin_port};
	return true;
}

static void on_answer(int result, struct evutil_addrinfo *ai, void *arg)
{
	if (result == EVUTIL_EAI_CANCEL) { /* net_egress_lookup_cancel: arg is gone */
		if (ai)
			evutil_freeaddrinfo(ai);
		return;
	}
	struct net_egress_lookup *l = arg;
	l->req = NULL;
	l->answered = true;
	l->result = result;
	l->found = result == 0 && pick(l, ai);
	if (ai)
		evutil_freeaddrinfo(ai);
	event_active(l->ev, EV_TIMEOUT, 0); /* done runs from the loop, never from in here */
}

static void on_lookup_event(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct net_egress_lookup *l = arg;
	struct err why;
	const struct sockaddr_in *to = NULL;
	if (!l->answered) {
		if (l->req)
			evdns_getaddrinfo_cancel(l->req);
		err_set(&why, 0, "no answer for %s within %d s", l->name, NET_EGRESS_LOOKUP_SECONDS);
	} else if (!l->found) {
		err_set(&why, 0, "%s has no IPv4 address: %s", l->name,
			l->result ? evutil_gai_strerror(l->result) : "none in the answer");
	} else if (l->open &&
		net_nft_allow_upstream(l->env->slot, ntohl(l->to.sin_addr.s_addr), ntohs(l->to.sin_port),
			NET_EGRESS_PASS_SECONDS) != 0) {
		err_set(&why, 0, "cannot open the sandbox's rules to %s", l->name);
	} else {
		to = &l->to;
	}
	struct sockaddr_in where = l->to;
	net_egress_admitted done = l->done;
	void *ctx = l->ctx;
	lookup_free(l);
	done(ctx, to ? &where : NULL, to ? NULL : &why);
}

/* Through the tunnel the sandbox's chain sees nothing but the proxy's
 * side: what it enforces is checked here, with the same ranges (docs:
 * "Never reachable"; allowOut, then denyOut, then the LAN). The proxy
 * connects by name to a name allowOut allows. */
static enum net_egress_verdict tunneled(const struct net_policy *p, const struct sockaddr_in *dst,
	const char *addr, const char *name, struct err *err)
{
	uint32_t a = ntohl(dst->sin_addr.s_addr);
	if (net_policy_in_ranges(net_policy_never, NET_POLICY_NEVER_RANGES, a) ||
		net_cidr_contains(net_pool_subnet(), a)) {
		err_set(err, 0, "%s is never reachable from a sandbox", addr);
		return NET_EGRESS_REFUSED;
	}
	bool lan = net_policy_in_ranges(net_policy_lan, NET_POLICY_LAN_RANGES, a);
	if (net_policy_in_ranges(p->allow, p->n_allow, a) || (!lan && net_policy_allows_address(p, a)))
		return NET_EGRESS_GO;
	if (!lan && name && net_policy_allows_name(p, name))
		return NET_EGRESS_GO;
	err_set(err, 0, "%s:%u%s%s is not allowed by the sandbox's rules", addr,
		(unsigned)ntohs(dst->sin_port), name ? " as " : "", name ? name : "");
	return NET_EGRESS_REFUSED;
}

enum net_egress_verdict net_egress_admit(struct net_egress_env *env, const struct sockaddr_in *dst,
	const char *name, bool pin, net_egress_admitted done, void *ctx, struct net_egress_lookup **lookup,
	struct err *err)
{
	const struct net_policy *p = env->policy;
	char addr[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &dst->sin_addr, addr, sizeof addr);
	if (p->tunnel.set)
		return tunneled(p, dst, addr, name, err);
	bool by_address = p->n_domains == 0 || net_policy_allows_address(p, ntohl(dst->sin_addr.s_addr));
	if (by_address && !(pin && name))
		return NET_EGRESS_GO;
	if (!by_address && (!name || !net_policy_allows_name(p, name))) {
		err_set(err, 0, "%s:%u%s%s is not allowed by allowOut", addr, (unsigned)ntohs(dst->sin_port),
			name ? " as " : " (no server name)", name ? name : "");
		return NET_EGRESS_REFUSED;
	}
	*lookup = net_egress_lookup(env, name, dst, !by_address, done, ctx, err);
	return *lookup ? NET_EGRESS_LOOKING : NET_EGRESS_REFUSED;
}

struct net_egress_lookup *net_egress_lookup(struct net_egress_env *env, const char *name,
	const struct sockaddr_in *asked, bool open, net_egress_admitted done, void *ctx, struct err *err)
{
	struct net_egress_lookup *l = calloc(1, sizeof *l);
	if (!l || !dns) {
		free(l);
		err_set(err, 0, "%s: %s", name, dns ? "out of memory" : "the backend has no resolver");
		return NULL;
	}
	*l = (struct net_egress_lookup){.env = env, .asked = *asked, .done = done, .ctx = ctx, .open = open};
	snprintf(l->name, sizeof l->name, "%s", name);
	struct timeval tv = {NET_EGRESS_LOOKUP_SECONDS, 0};
	l->ev = evtimer_new(env->base, on_lookup_event, l);
	if (!l->ev || evtimer_add(l->ev, &tv) != 0) {
		lookup_free(l);
		err_set(err, 0, "out of memory");
		return NULL;
	}
	struct evutil_addrinfo hints = {.ai_family = AF_INET,
		.ai_socktype = SOCK_STREAM,
		.ai_protocol = IPPROTO_TCP};
	struct evdns_getaddrinfo_request *req = evdns_getaddrinfo(dns, l->name, NULL, &hints, on_answer, l);
	if (!l->answered)
		l->req = req;
	return l;
}

void net_egress_lookup_cancel(struct net_egress_lookup *l)
{
	if (!l)
		return;
	if (l->req)
		evdns_getaddrinfo_cancel(l->req);
	lookup_free(l);
}
