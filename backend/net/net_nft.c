/* The backend's nftables table (net_nft.h). */
#define _GNU_SOURCE
#include "net/net_nft.h"

#include "lib/err.h"
#include "net/net_policy.h"
#include "runtime/runtime_leftovers.h"

#include <arpa/inet.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TABLE_PREFIX "e2b_local_"
/* ICMP "administratively prohibited": a refused connection fails at once
 * instead of hanging until its timeout. */
#define REFUSE "reject with icmpx admin-prohibited"

static struct nft_ctx *nft;
static char table[64];

/* Runs one nft script as one transaction; -1 with nft's message in err
 * (which may be NULL). */
static int run(const char *script, struct err *err)
{
	int rc = nft_run_cmd_from_buffer(nft, script);
	const char *said = nft_ctx_get_error_buffer(nft);
	if (rc != 0)
		err_set(err, 0, "nftables: %.*s", (int)strcspn(said ? said : "?", "\n"),
			said && *said ? said : "failed");
	return rc == 0 ? 0 : -1;
}

static void clean_stale_tables(void)
{
	if (run("list tables inet", NULL) != 0)
		return;
	char *text = strdup(nft_ctx_get_output_buffer(nft));
	for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		int pid = 0;
		if (sscanf(line, "table inet " TABLE_PREFIX "%d", &pid) != 1 || pid <= 0 || pid == getpid() ||
			runtime_backend_alive(pid))
			continue;
		char cmd[96];
		snprintf(cmd, sizeof cmd, "delete table inet " TABLE_PREFIX "%d", pid);
		fprintf(stderr, "e2b-local-backend: removing the nftables table left by backend %d\n", pid);
		run(cmd, NULL);
	}
	free(text);
}

static void put_ranges(FILE *f, const struct net_range *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
		struct in_addr x = {.s_addr = htonl(r[i].first)}, y = {.s_addr = htonl(r[i].last)};
		inet_ntop(AF_INET, &x, a, sizeof a);
		inet_ntop(AF_INET, &y, b, sizeof b);
		if (r[i].first == r[i].last)
			fprintf(f, "%s%s", i ? ", " : "", a);
		else
			fprintf(f, "%s%s-%s", i ? ", " : "", a, b);
	}
}

int net_nft_init(const struct net_nft_config *c, struct err *err)
{
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft || nft_ctx_buffer_output(nft) != 0 || nft_ctx_buffer_error(nft) != 0) {
		err_set(err, 0, "cannot set up libnftables");
		return -1;
	}
	clean_stale_tables();
	snprintf(table, sizeof table, TABLE_PREFIX "%d", (int)getpid());
	/* net_policy's ranges: the LAN, and what is never reachable (every sandbox too). */
	char *lan = NULL, *never = NULL, *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&lan, &len);
	if (f) {
		put_ranges(f, net_policy_lan, NET_POLICY_LAN_RANGES);
		fclose(f);
	}
	f = open_memstream(&never, &len);
	if (f) {
		put_ranges(f, net_policy_never, NET_POLICY_NEVER_RANGES);
		fclose(f);
	}
	int n = !lan || !never
		? -1
		: asprintf(&script,
			  "table inet %1$s {\n"
			  "  set lan4 { type ipv4_addr; flags interval; auto-merge;\n"
			  "    elements = { %6$s } }\n"
			  "  set never4 { type ipv4_addr; flags interval; auto-merge;\n"
			  "    elements = { %7$s, %3$s } }\n"
			  "  set conns { type ifname; size 65535; flags dynamic; }\n"
			  "  map sandboxes { type ifname : verdict; }\n"
			  "  chain forward {\n"
			  "    type filter hook forward priority filter; policy accept;\n"
			  "    iifname \"%2$s*\" jump from_sandbox\n"
			  "    oifname \"%2$s*\" ct state established,related accept\n"
			  "    oifname \"%2$s*\" drop\n"
			  "  }\n"
			  "  chain from_sandbox {\n"
			  "    meta nfproto ipv6 " REFUSE "\n"
			  "    fib saddr . iif oif missing drop\n"
			  "    ct state established,related accept\n"
			  "    ip daddr @never4 " REFUSE "\n"
			  "    ct state new add @conns { iifname ct count over %5$d } " REFUSE "\n"
			  "    iifname vmap @sandboxes\n"
			  "    ip daddr @lan4 " REFUSE "\n"
			  "    accept\n"
			  "  }\n"
			  "  chain input {\n"
			  "    type filter hook input priority filter; policy accept;\n"
			  "    iifname \"%2$s*\" " REFUSE "\n"
			  "  }\n"
			  "  chain postrouting {\n"
			  "    type nat hook postrouting priority srcnat; policy accept;\n"
			  "    ip saddr %4$s oifname != \"%2$s*\" masquerade\n"
			  "  }\n"
			  "}\n",
			  table, c->ifprefix, c->subnet, c->block, c->conn_limit, lan, never);
	int rc = n < 0 ? -1 : run(script, err);
	free(script);
	free(lan);
	free(never);
	if (n < 0)
		err_set(err, 0, "out of memory");
	return rc;
}

int net_nft_apply(int slot, const char *ifname, const struct net_policy *p, struct net_nft_sandbox *has,
	struct err *err)
{
	if (!has->chain && p->n_allow == 0 && p->n_deny == 0 && p->n_domains == 0)
		return 0; /* the shared rules already say it all (transform rules are net_egress's) */
	char *script = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&script, &len);
	if (!f) {
		err_set(err, 0, "out of memory");
		return -1;
	}
	if (has->chain) {
		fprintf(f, "flush chain inet %s s%d\n", table, slot);
	} else {
		fprintf(f, "add chain inet %s s%d\n", table, slot);
		fprintf(f, "add element inet %s sandboxes { \"%s\" : jump s%d }\n", table, ifname, slot);
	}
	if (p->n_domains) {
		fprintf(f,
			"add set inet %s p%d { type ipv4_addr . inet_service; size 65535; flags timeout; }\n",
			table, slot);
		fprintf(f, "flush set inet %s p%d\n", table, slot);
	}
	/* allowOut before denyOut: an address both match is allowed, as on E2B. */
	if (p->n_allow) {
		fprintf(f, "add rule inet %s s%d ip daddr { ", table, slot);
		put_ranges(f, p->allow, p->n_allow);
		fprintf(f, " } accept\n");
	}
	/* What the egress proxy connects to for an allowed name: past denyOut,
	 * but not past the LAN ranges (return, not accept). */
	if (p->n_domains)
		fprintf(f, "add rule inet %s s%d ip daddr . tcp dport @p%d return\n", table, slot, slot);
	if (p->n_deny) {
		fprintf(f, "add rule inet %s s%d ip daddr { ", table, slot);
		put_ranges(f, p->deny, p->n_deny);
		fprintf(f, " } " REFUSE "\n");
	}
	int rc = fclose(f) == 0 ? run(script, err) : -1;
	free(script);
	if (rc == 0) {
		has->chain = true;
		has->set = has->set || p->n_domains;
	}
	return rc;
}

int net_nft_allow_upstream(int slot, uint32_t addr, uint16_t port, int seconds)
{
	char a[INET_ADDRSTRLEN], script[256];
	struct err why;
	struct in_addr in = {.s_addr = htonl(addr)};
	inet_ntop(AF_INET, &in, a, sizeof a);
	snprintf(script, sizeof script, "add element inet %s p%d { %s . %u timeout %ds }\n", table, slot, a,
		(unsigned)port, seconds);
	int rc = run(script, &why);
	if (rc != 0)
		fprintf(stderr, "e2b-local-backend: %.255s\n", why.msg);
	return rc;
}

void net_nft_forget(int slot, const char *ifname, const struct net_nft_sandbox *has)
{
	char script[384];
	snprintf(script, sizeof script,
		"delete element inet %s sandboxes { \"%s\" }\ndelete chain inet %s s%d\n", table, ifname,
		table, slot);
	if (has->set) {
		size_t n = strlen(script);
		snprintf(script + n, sizeof script - n, "delete set inet %s p%d\n", table, slot);
	}
	struct err why;
	if (run(script, &why) != 0)
		fprintf(stderr, "e2b-local-backend: %.255s\n", why.msg);
}

void net_nft_shutdown(void)
{
	if (!nft)
		return;
	if (table[0]) {
		char cmd[96];
		snprintf(cmd, sizeof cmd, "delete table inet %s", table);
		run(cmd, NULL);
	}
	nft_ctx_free(nft);
	nft = NULL;
	table[0] = '\0';
}
