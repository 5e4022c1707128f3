/* Egress rules (net_policy.h). */
#include "net/net_policy.h"

#include "lib/err.h"
#include "net/net_name.h"

#include <arpa/inet.h>
#include <cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a.b.c.d" or "a.b.c.d/n": 1 IPv4, 2 IPv6 syntax, 0 neither. E2B refuses
 * an unspecified address (0.0.0.0, 0.0.0.0/8) except all traffic itself. */
static int parse_entry(const char *text, struct net_range *r)
{
	char addr[64];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);
	if (n == 0 || n >= sizeof addr)
		return 0;
	memcpy(addr, text, n);
	addr[n] = '\0';
	long prefix = 32;
	if (slash) {
		char *end = NULL;
		prefix = strtol(slash + 1, &end, 10);
		if (!isdigit((unsigned char)slash[1]) || *end) /* strtol would take " 8" or "+8" */
			return 0;
	}
	struct in_addr v4;
	struct in6_addr v6;
	if (inet_pton(AF_INET, addr, &v4) == 1) {
		if (prefix < 0 || prefix > 32)
			return 0;
		uint32_t a = ntohl(v4.s_addr);
		if (a == 0 && strcmp(text, NET_POLICY_ALL_TRAFFIC) != 0)
			return 0;
		uint32_t mask = prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);
		r->first = a & mask;
		r->last = r->first | ~mask;
		return 1;
	}
	if (inet_pton(AF_INET6, addr, &v6) == 1 && prefix >= 0 && prefix <= 128)
		return IN6_IS_ADDR_UNSPECIFIED(&v6) && prefix != 0 ? 0 : 2;
	return 0;
}

static int compare_ranges(const void *a, const void *b)
{
	const struct net_range *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Sorts and merges overlapping or adjacent ranges in place. */
static size_t merge(struct net_range *r, size_t n)
{
	if (n == 0)
		return 0;
	qsort(r, n, sizeof *r, compare_ranges);
	size_t out = 0;
	for (size_t i = 1; i < n; i++) {
		if (r[out].last == 0xffffffffu || r[i].first <= r[out].last + 1) {
			if (r[i].last > r[out].last)
				r[out].last = r[i].last;
		} else {
			r[++out] = r[i];
		}
	}
	return out + 1;
}

/* One list into ranges; extra (0.0.0.0/0 for allow_internet_access false)
 * is added when given. */
static int parse_list(const cJSON *list, bool allow, const struct net_range *extra, struct net_range **out,
	size_t *count, struct net_policy *p, struct err *err)
{
	const char *field = allow ? "allowOut" : "denyOut";
	size_t n = list ? (size_t)cJSON_GetArraySize(list) : 0;
	if (list && !cJSON_IsArray(list)) {
		err_set(err, 0, "field \"network.%s\" must be an array of strings", field);
		return -1;
	}
	if (n > NET_POLICY_MAX_ENTRIES) {
		err_set(err, 0, "field \"network.%s\" may have at most %d entries", field,
			NET_POLICY_MAX_ENTRIES);
		return -1;
	}
	*out = calloc(n + 1, sizeof **out);
	if (!*out) {
		err_set(err, 0, "out of memory");
		return -1;
	}
	size_t k = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, list) {
		if (!cJSON_IsString(item)) {
			err_set(err, 0, "field \"network.%s\" must be an array of strings", field);
			goto fail;
		}
		int kind = parse_entry(item->valuestring, &(*out)[k]);
		if (kind == 1) {
			k++;
		} else if (kind == 2 && allow) {
			err_set(err, 0,
				"invalid allowed address %.64s: IPv6 is not routed to "
				"sandboxes of the local backend",
				item->valuestring);
			goto fail;
		} else if (kind == 0 && allow) {
			char name[256];
			if (!net_name_domain(item->valuestring, name, sizeof name)) {
				err_set(err, 0, "invalid allowed address %.64s", item->valuestring);
				goto fail;
			}
			if (!p->domains)
				p->domains = calloc(n, sizeof *p->domains);
			if (!p->domains || !(p->domains[p->n_domains] = strdup(name))) {
				err_set(err, 0, "out of memory");
				goto fail;
			}
			p->n_domains++;
		} else if (kind == 0) {
			err_set(err, 0, "invalid denied CIDR %.64s", item->valuestring);
			goto fail;
		} /* an IPv6 deny: nothing to do, no IPv6 leaves a sandbox */
	}
	if (extra)
		(*out)[k++] = *extra;
	*count = merge(*out, k);
	return 0;
fail:
	free(*out);
	*out = NULL;
	return -1;
}

int net_policy_parse(const cJSON *allow_out, const cJSON *deny_out, int allow_internet_access,
	struct net_policy *out, struct err *err)
{
	memset(out, 0, sizeof *out);
	out->allow_internet_access = allow_internet_access;
	static const struct net_range everything = {0, 0xffffffffu};
	if (parse_list(allow_out, true, NULL, &out->allow, &out->n_allow, out, err) != 0 ||
		parse_list(deny_out, false, allow_internet_access == 0 ? &everything : NULL, &out->deny,
			&out->n_deny, out, err) != 0) {
		net_policy_free(out);
		return -1;
	}
	if (out->n_domains && !net_policy_denies_all(out)) {
		/* E2B's rule and words: a domain allowlist means nothing else. */
		err_set(err, 0,
			"When specifying allowed domains in allow out, you must include "
			"'ALL_TRAFFIC' in deny out to block all other traffic.");
		net_policy_free(out);
		return -1;
	}
	out->allow_out = allow_out ? cJSON_Duplicate(allow_out, 1) : NULL;
	out->deny_out = deny_out ? cJSON_Duplicate(deny_out, 1) : NULL;
	if ((allow_out && !out->allow_out) || (deny_out && !out->deny_out)) {
		net_policy_free(out);
		err_set(err, 0, "out of memory");
		return -1;
	}
	return 0;
}

void net_policy_free(struct net_policy *p)
{
	for (size_t i = 0; i < p->n_domains; i++)
		free(p->domains[i]);
	free(p->domains);
	free(p->allow);
	free(p->deny);
	cJSON_Delete(p->allow_out);
	cJSON_Delete(p->deny_out);
	net_rules_free(&p->rules);
	net_tunnel_free(&p->tunnel);
	memset(p, 0, sizeof *p);
	p->allow_internet_access = -1;
}

bool net_policy_is_open(const struct net_policy *p)
{
	return p->n_allow == 0 && p->n_deny == 0 && p->n_domains == 0 && p->rules.n == 0 && !p->tunnel.set;
}

bool net_policy_allows_name(const struct net_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_domains; i++)
		if (net_name_matches(p->domains[i], name))
			return true;
	return false;
}

const struct net_range net_policy_lan[NET_POLICY_LAN_RANGES] = {{0x0a000000u, 0x0affffffu},
	{0xac100000u, 0xac1fffffu}, {0xc0a80000u, 0xc0a8ffffu}, {0x64400000u, 0x647fffffu}};
const struct net_range net_policy_never[NET_POLICY_NEVER_RANGES] = {{0x00000000u, 0x00ffffffu},
	{0x7f000000u, 0x7fffffffu}, {0xa9fe0000u, 0xa9feffffu}, {0xe0000000u, 0xffffffffu}};

bool net_policy_in_ranges(const struct net_range *r, size_t n, uint32_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= r[i].first && addr <= r[i].last)
			return true;
	return false;
}

bool net_policy_allows_address(const struct net_policy *p, uint32_t addr)
{
	return net_policy_in_ranges(p->allow, p->n_allow, addr) ||
		!net_policy_in_ranges(p->deny, p->n_deny, addr);
}

bool net_policy_denies_all(const struct net_policy *p)
{
	return p->n_deny == 1 && p->deny[0].first == 0 && p->deny[0].last == 0xffffffffu;
}

bool net_policy_blocks_all(const struct net_policy *p)
{
	return p->n_allow == 0 && p->n_domains == 0 && net_policy_denies_all(p);
}

void net_policy_to_json(const struct net_policy *p, cJSON *network)
{
	if (p->allow_out)
		cJSON_AddItemToObject(network, "allowOut", cJSON_Duplicate(p->allow_out, 1));
	if (p->deny_out)
		cJSON_AddItemToObject(network, "denyOut", cJSON_Duplicate(p->deny_out, 1));
	if (p->rules.given)
		cJSON_AddItemToObject(network, "rules", cJSON_Duplicate(p->rules.given, 1));
	if (p->tunnel.set)
		cJSON_AddItemToObject(network, "egressProxy", net_tunnel_to_json(&p->tunnel));
}
