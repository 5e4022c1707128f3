/* libFuzzer target: a sandbox's egress settings as a client sends them on
 * create and updateNetwork (backend/net: net_policy.c, net_rules.c,
 * net_tunnel.c, net_name.c), parsed in the order api_network.c parses them.
 * Input: one flags byte (allow_internet_access unset / false / true), four
 * bytes of an IPv4 address, then the network object's JSON text up to a NUL,
 * then a server name to match. Any input: no crash or leak; a refusal has a
 * message and never quotes the proxy's password; what is accepted holds
 * sorted, disjoint ranges that answer for their own ends, lowercase valid
 * names, no password in what getInfo shows, and reads back the same from
 * what getInfo shows (so a restart's record gives the same rules). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "lib/err.h"
#include "net/net_name.h"
#include "net/net_policy.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MARK "Zq9-pa55-Zq9"

static const cJSON *field(const cJSON *o, const char *name)
{
	const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, name) : NULL;
	return cJSON_IsNull(v) ? NULL : v;
}

/* As api_network.c: the address lists, then the rules, then the tunnel. */
static int parse(const cJSON *network, int allow_internet, struct net_policy *p, struct err *err)
{
	if (net_policy_parse(field(network, "allowOut"), field(network, "denyOut"), allow_internet, p, err) !=
		0)
		return -1;
	if (net_rules_parse(field(network, "rules"), &p->rules, err) != 0 ||
		net_tunnel_parse(field(network, "egressProxy"), &p->tunnel, err) != 0) {
		net_policy_free(p);
		return -1;
	}
	return 0;
}

static void check_ranges(const struct net_range *r, size_t n, const char *which)
{
	for (size_t i = 0; i < n; i++) {
		REQUIRE(r[i].first <= r[i].last, "%s range %zu upside down", which, i);
		/* merged: neither overlapping nor touching the next */
		if (i > 0)
			REQUIRE(r[i - 1].last != 0xffffffffu && r[i - 1].last + 1 < r[i].first,
				"%s ranges %zu, %zu not merged", which, i - 1, i);
	}
}

static void check_accepted(const struct net_policy *p, uint32_t addr, const char *name)
{
	check_ranges(p->allow, p->n_allow, "allow");
	check_ranges(p->deny, p->n_deny, "deny");
	for (size_t i = 0; i < p->n_allow; i++)
		REQUIRE(net_policy_allows_address(p, p->allow[i].first) &&
				net_policy_allows_address(p, p->allow[i].last),
			"an allowed range's end refused");
	for (size_t i = 0; i < p->n_deny; i++) {
		if (!net_policy_in_ranges(p->allow, p->n_allow, p->deny[i].first))
			REQUIRE(!net_policy_allows_address(p, p->deny[i].first),
				"a denied address let through");
	}
	REQUIRE(net_policy_allows_address(p, addr) ==
			(net_policy_in_ranges(p->allow, p->n_allow, addr) ||
				!net_policy_in_ranges(p->deny, p->n_deny, addr)),
		"allow does not take precedence");
	if (p->allow_internet_access == 0)
		REQUIRE(net_policy_denies_all(p), "internet access off, yet not all denied");
	if (p->n_domains)
		REQUIRE(net_policy_denies_all(p), "domains without denying all");
	for (size_t i = 0; i < p->n_domains; i++) {
		char again[256];
		REQUIRE(net_name_domain(p->domains[i], again, sizeof again) &&
				strcmp(again, p->domains[i]) == 0,
			"a domain is not a name in its own form: %s", p->domains[i]);
		if (p->domains[i][0] != '*')
			REQUIRE(net_policy_allows_name(p, p->domains[i]), "a domain does not allow itself");
	}
	for (size_t i = 0; i < p->rules.n; i++) {
		const char *pattern = p->rules.sets[i].pattern;
		if (pattern[0] != '*')
			REQUIRE(net_rules_match(&p->rules, pattern) == &p->rules.sets[i],
				"an exact key loses: %s", pattern);
	}
	const struct net_rule_set *hit = net_rules_match(&p->rules, name);
	if (hit)
		REQUIRE(net_name_matches(hit->pattern, name), "a rule for %s matched %s", hit->pattern, name);
	if (net_policy_allows_name(p, name)) {
		int any = 0;
		for (size_t i = 0; i < p->n_domains; i++)
			any |= net_name_matches(p->domains[i], name);
		REQUIRE(any, "a name allowed by no domain");
	}
}

/* What getInfo shows parses back to the same rules. */
static void check_round_trip(const struct net_policy *p)
{
	cJSON *shown = cJSON_CreateObject();
	net_policy_to_json(p, shown);
	const cJSON *tunnel = cJSON_GetObjectItemCaseSensitive(shown, "egressProxy");
	REQUIRE(!tunnel || !cJSON_GetObjectItemCaseSensitive(tunnel, "password"),
		"getInfo shows the password");
	struct net_policy q;
	struct err err;
	err_clear(&err);
	/* a tunnel with a password reads back without it, and needs none */
	REQUIRE(parse(shown, p->allow_internet_access, &q, &err) == 0, "what getInfo shows is refused: %s",
		err.msg);
	REQUIRE(q.n_allow == p->n_allow && q.n_deny == p->n_deny && q.n_domains == p->n_domains &&
			q.rules.n == p->rules.n,
		"read back differently");
	REQUIRE(!p->n_allow || memcmp(q.allow, p->allow, p->n_allow * sizeof *p->allow) == 0,
		"allow ranges differ");
	REQUIRE(!p->n_deny || memcmp(q.deny, p->deny, p->n_deny * sizeof *p->deny) == 0,
		"deny ranges differ");
	for (size_t i = 0; i < p->n_domains; i++)
		REQUIRE(strcmp(q.domains[i], p->domains[i]) == 0, "domains differ");
	REQUIRE(q.tunnel.set == p->tunnel.set && q.tunnel.port == p->tunnel.port &&
			strcmp(q.tunnel.host, p->tunnel.host) == 0,
		"the tunnel differs");
	net_policy_free(&q);
	cJSON_Delete(shown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	int allow_internet = (int)(data[0] % 3) - 1;
	uint32_t addr = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 8 | data[4];
	data += 5;
	size -= 5;
	const uint8_t *nul = memchr(data, 0, size);
	size_t json_len = nul ? (size_t)(nul - data) : size;
	cJSON *network = cJSON_ParseWithLength((const char *)data, json_len);
	char name[256] = "";
	if (nul) {
		size_t n = size - json_len - 1;
		if (n >= sizeof name)
			n = sizeof name - 1;
		memcpy(name, nul + 1, n);
		name[n] = '\0';
	}

	struct net_policy p;
	struct err err;
	memset(&err, 'x', sizeof err);
	if (parse(network, allow_internet, &p, &err) != 0) {
		REQUIRE(memchr(err.msg, '\0', sizeof err.msg) && err.msg[0] && err.msg[0] != 'x',
			"a refusal without a message");
		/* The same request with a password only it holds: never quoted. */
		cJSON *proxy = cJSON_GetObjectItemCaseSensitive(network, "egressProxy");
		if (cJSON_IsObject(proxy) && !memmem(data, json_len, MARK, strlen(MARK))) {
			cJSON_DeleteItemFromObjectCaseSensitive(proxy, "password");
			cJSON_AddStringToObject(proxy, "password", MARK);
			if (parse(network, allow_internet, &p, &err) != 0)
				REQUIRE(!strstr(err.msg, MARK), "a refusal quotes the password: %s", err.msg);
			else
				net_policy_free(&p);
		}
	} else {
		check_accepted(&p, addr, name);
		check_round_trip(&p);
		net_policy_free(&p);
	}
	cJSON_Delete(network);
	return 0;
}
