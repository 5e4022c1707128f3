/* The egress proxy of E2B's transform rules (net_rules.h) and of allowOut's
 * domain names (net_egress_admit.h). A sandbox with either gets, inside its
 * network namespace, a listener on NET_EGRESS_ADDRESS:NET_EGRESS_PORT and an
 * nftables table of its own that sends its outbound TCP ports 443 and 80
 * there; the backend's egress CA is added to its trust store
 * (/etc/ssl/certs/ca-certificates.crt).
 *
 * Each connection's TLS ClientHello (port 80: its request head) is read
 * without consuming it. When its server name (the Host) matches a rule, the proxy completes the handshake itself with
 * a certificate the CA makes for that name, connects to the address the
 * sandbox asked for over TLS verified against the host's trust store (and
 * --egress-ca-file; port 80: plain HTTP both ways, each request's Host that
 * of the first), and forwards every HTTP/1.1 request with the rule's
 * headers set, ${e2b.secrets.<name>} placeholders resolved at that moment:
 * the secret never enters the sandbox. Any other connection is passed on
 * unchanged. Upstream connections are made inside the sandbox's namespace
 * (marked so that they are not redirected again), so its egress rules and
 * connection limit apply to them as to anything else it sends.
 * docs/backend/networking.md ("Transform rules") says what is supported. */
#ifndef E2B_BACKEND_NET_EGRESS_H
#define E2B_BACKEND_NET_EGRESS_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct event_base;
struct net_policy;
struct sandbox;

#define NET_EGRESS_ADDRESS "127.0.0.53" /* the DNS relay's, inside each sandbox */
#define NET_EGRESS_PORT 15443
#define NET_EGRESS_MARK 0x0e2b0443u /* the proxy's own upstream connections */
#define NET_EGRESS_MAX_CONNS 256    /* per sandbox */

/* Loads or makes the egress CA (in ca_dir when given, else in memory) and
 * the TLS settings; upstream_ca_file (or NULL): more certificates to trust
 * upstream. -1 with err. Until it succeeds no sandbox may have rules. */
int net_egress_init(struct event_base *base, const char *ca_dir, const char *upstream_ca_file,
	struct err *err);
void net_egress_shutdown(void);
bool net_egress_available(void);

/* How a placeholder's secret is found: 0 with a malloc'd copy of its value
 * in *value (the caller wipes and frees it), -1 when there is none. */
typedef int (*net_egress_secret_fn)(void *ctx, const char *name, char **value);
void net_egress_set_secrets(net_egress_secret_fn fn, void *ctx);

struct net_egress;

/* Whether a sandbox with this policy needs its proxy: transform rules,
 * domain names in allowOut, or a tunnel (egressProxy). */
bool net_egress_wanted(const struct net_policy *policy);
/* Starts the proxy of the sandbox whose networking has slot, for policy
 * (borrowed: the caller keeps it alive until net_egress_set_policy or
 * net_egress_stop). NULL with err. */
struct net_egress *net_egress_start(struct sandbox *sb, int slot, const struct net_policy *policy,
	struct err *err);
/* A new policy (updateNetwork): connections already open keep going;
 * each request reads the rules anew. -1 with err when the sandbox's table
 * could not follow it (a tunnel turned on or off). */
int net_egress_set_policy(struct net_egress *e, const struct net_policy *policy, struct err *err);
/* Closes the listener and every connection; remove_redirect: also drops
 * the sandbox's table (its rules were cleared; the sandbox goes on). */
void net_egress_stop(struct net_egress *e, bool remove_redirect);

#endif
