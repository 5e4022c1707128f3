/* E2B's egress transform rules (network.rules of a create body and of
 * updateNetwork): per destination name, headers the egress proxy sets on
 * every HTTPS request (net_egress.h). Parsed, validated with a 400's
 * message, and matched. Pure: no I/O.
 *
 *   {"api.example.com": [{"transform": {"headers": {"Authorization": "Bearer ${e2b.secrets.k}"}}}],
 *    "*.example.org": [{}]}
 *
 * A key is a DNS name or "*." and one (its subdomains at any depth, never
 * the apex), lowercased; an exact key wins over wildcards, and the longest
 * wildcard over shorter ones; rule sets are not merged. The rules of one
 * key apply in order, a later header replacing an earlier one of the same
 * name. Values may hold "${e2b.secrets.<name>}", resolved per request. */
#ifndef E2B_BACKEND_NET_RULES_H
#define E2B_BACKEND_NET_RULES_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct err;

#define NET_RULES_MAX_KEYS 64
#define NET_RULES_MAX_RULES 16   /* per key */
#define NET_RULES_MAX_HEADERS 32 /* per key, after merging */
#define NET_RULES_MAX_VALUE 8192 /* bytes of one header value */
#define NET_RULES_SECRET_OPEN "${e2b.secrets."
#define NET_RULES_IDENTITY_OPEN "${e2b.identity.tokens."

struct net_rule_header {
	char *name;
	char *value; /* as given: placeholders unresolved */
};

struct net_rule_set {
	char *pattern; /* lowercase: "api.example.com" or "*.example.com" */
	struct net_rule_header *headers;
	size_t n_headers;
};

struct net_rules {
	struct net_rule_set *sets;
	size_t n;
	struct cJSON *given; /* the object as given (keys lowercased), or NULL */
};

/* rules: an object or NULL (none). -1 with the 400 message in err and
 * nothing to free. */
int net_rules_parse(const struct cJSON *rules, struct net_rules *out, struct err *err);
void net_rules_free(struct net_rules *r);
/* The set for a TLS server name (lowercase), or NULL. */
const struct net_rule_set *net_rules_match(const struct net_rules *r, const char *host);

#endif
