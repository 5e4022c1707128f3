/* net/ — sandbox networking: every isolated sandbox gets a veth pair with
 * an address from a block this backend claimed (net_pool.h), a default
 * route, NAT out through whatever routes the backend's namespace has, a DNS
 * relay (net_dns.h) and the egress rules of its create body or of
 * updateNetwork, enforced in the backend's nftables table (net_nft.h).
 * docs/backend/networking.md ("Networking") says what is reachable and why.
 * Owns: the pool, the veths, the nftables table, the relays, and each
 * sandbox's struct sandbox_net (sandbox.net).
 * May call: registry/ (struct sandbox; its hooks are registered by main.c),
 * runtime/ (sockets and files inside a sandbox) and lib/. Called by main.c
 * (init, hooks, shutdown) and api/ (create, updateNetwork, records). */
#ifndef E2B_BACKEND_NET_H
#define E2B_BACKEND_NET_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct err;
struct event_base;
struct net_policy;
struct registry_hooks;
struct sandbox;

#define NET_DEFAULT_CONN_LIMIT 4096 /* tracked connections per sandbox */

struct net_options {
	const char *subnet; /* --sandbox-subnet, NULL for the default */
	long max_sandboxes;
	long conn_limit;            /* --sandbox-conn-limit */
	bool off;                   /* --sandbox-network off: loopback only */
	const char *egress_ca_dir;  /* where the egress CA is kept (net_egress.h), NULL: memory */
	const char *egress_ca_file; /* --egress-ca-file, or NULL */
};

/* With isolation (runtime_isolated()): turns IPv4 forwarding on in the
 * backend's namespace, claims addresses, makes the nftables table and reads
 * the resolvers. -1 with a message printed. Without isolation sandboxes
 * share the host's network and this does nothing. */
int net_init(struct event_base *base, const struct net_options *o);
/* Removes the table and the address claim (every sandbox is gone by then). */
void net_shutdown(void);
bool net_enabled(void);
/* The `removing` hook: releases a sandbox's address, rules and relay. */
void net_registry_hooks(struct registry_hooks *hooks);

/* Gives a new sandbox its interface, relay, /etc/resolv.conf and rules;
 * takes *policy (it is reset either way). -1 with err (a 500). */
int net_sandbox_attach(struct sandbox *sb, struct net_policy *policy, struct err *err);
/* net_sandbox_attach in three parts, for a caller that runs the middle one
 * off the loop (warm/): begin (on the loop) takes the sandbox's address and
 * *policy, and sets *attach (NULL, with 0, when networking is off); work
 * makes its link, its relay's sockets and /etc/resolv.conf, touching nothing
 * the loop does (it may run on a worker, lib/worker.h); end (on the loop,
 * always, once begin gave an attach) starts the relay and the rules, or
 * undoes it all, and frees *attach. -1 with err. */
struct net_attach;
int net_sandbox_attach_begin(struct sandbox *sb, struct net_policy *policy, struct net_attach **attach,
	struct err *err);
void net_sandbox_attach_work(struct net_attach *attach);
int net_sandbox_attach_end(struct net_attach *attach, struct err *err);
/* Replaces a sandbox's rules at once (takes *policy); the next connection
 * sees them. -1 with err. */
int net_sandbox_update(struct sandbox *sb, struct net_policy *policy, struct err *err);
/* Adds allowOut/denyOut as last set to a SandboxDetail's network object. */
void net_sandbox_to_json(const struct sandbox *sb, struct cJSON *network);

#endif
