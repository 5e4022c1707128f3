/* net/net_policy.c: allowOut/denyOut parsing with E2B's rules and messages,
 * reduction to sorted disjoint ranges, allow_internet_access false as
 * "deny everything", domain names, whether an address passes the lists,
 * egressProxy (net/net_tunnel.c);
 * net/net_pool.c's subnet parsing. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/err.h"
#include "net/net_policy.h"
#include "net/net_pool.h"
#include "suites.h"

static int parse(const char *allow, const char *deny, int internet, struct net_policy *p, struct err *err)
{
	cJSON *a = allow ? cJSON_Parse(allow) : NULL, *d = deny ? cJSON_Parse(deny) : NULL;
	int rc = net_policy_parse(a, d, internet, p, err);
	cJSON_Delete(a);
	cJSON_Delete(d);
	return rc;
}

static void refused(const char *allow, const char *deny, const char *message)
{
	struct net_policy p;
	struct err err;
	err_clear(&err);
	CHECK(parse(allow, deny, -1, &p, &err) == -1);
	CHECK(strstr(err.msg, message) != NULL);
	if (!strstr(err.msg, message))
		fprintf(stderr, "    message: %s\n", err.msg);
}

#define RANGE(r, a, b) CHECK((r).first == (a) && (r).last == (b))

void suite_net_policy(void)
{
	struct net_policy p;
	struct err err;
	/* nothing given: open */
	CHECK(parse(NULL, NULL, -1, &p, &err) == 0);
	CHECK(net_policy_is_open(&p) && !net_policy_blocks_all(&p));
	net_policy_free(&p);

	/* bare addresses are /32, host bits are cleared, overlaps and neighbours merge */
	CHECK(parse("[\"10.1.2.3/8\", \"10.200.0.0/16\", \"11.0.0.0/8\", \"1.2.3.4\"]", "[]", -1, &p, &err) ==
		0);
	CHECK_NUM(p.n_allow, 2);
	RANGE(p.allow[0], 0x01020304u, 0x01020304u);
	RANGE(p.allow[1], 0x0a000000u, 0x0bffffffu);
	CHECK_NUM(p.n_deny, 0);
	cJSON *net = cJSON_CreateObject();
	net_policy_to_json(&p, net);
	char *text = cJSON_PrintUnformatted(net);
	CHECK_STR(text,
		"{\"allowOut\":[\"10.1.2.3/8\",\"10.200.0.0/16\",\"11.0.0.0/8\",\"1.2.3.4\"],\"denyOut\":[]}");
	free(text);
	cJSON_Delete(net);
	net_policy_free(&p);

	/* allow_internet_access false is denyOut 0.0.0.0/0; with an allowOut it is "only these" */
	CHECK(parse(NULL, NULL, 0, &p, &err) == 0);
	CHECK(net_policy_denies_all(&p) && net_policy_blocks_all(&p) && !net_policy_is_open(&p));
	net_policy_free(&p);
	CHECK(parse("[\"203.0.113.10\"]", "[\"0.0.0.0/0\", \"8.8.8.8\"]", -1, &p, &err) == 0);
	CHECK(net_policy_denies_all(&p) && !net_policy_blocks_all(&p));
	RANGE(p.deny[0], 0u, 0xffffffffu);
	net_policy_free(&p);

	/* an IPv6 deny is accepted (no IPv6 leaves anyway) and changes nothing */
	CHECK(parse(NULL, "[\"2001:db8::/32\"]", -1, &p, &err) == 0);
	CHECK_NUM(p.n_deny, 0);
	net_policy_free(&p);

	refused(NULL, "[\"example.com\"]", "invalid denied CIDR example.com");
	refused(NULL, "[\"0.0.0.0\"]", "invalid denied CIDR 0.0.0.0");
	refused(NULL, "[\"0.0.0.0/8\"]", "invalid denied CIDR");
	refused(NULL, "[\"10.0.0.0/33\"]", "invalid denied CIDR");
	refused(NULL, "[\"10.0.0.0/\"]", "invalid denied CIDR");
	refused(NULL, "[\"10.0.0.0/-1\"]", "invalid denied CIDR");
	refused(NULL, "[\"10.0.0.0/ 8\"]", "invalid denied CIDR");
	refused(NULL, "[\"10.0.0.0/+8\"]", "invalid denied CIDR");
	/* domain names: with denyOut blocking everything, as on E2B; exact or below "*." */
	CHECK(parse("[\"World.Test\", \"*.api.example\", \"10.0.0.1\"]", "[\"0.0.0.0/0\"]", -1, &p, &err) ==
		0);
	CHECK_NUM(p.n_domains, 2);
	CHECK_NUM(p.n_allow, 1);
	CHECK(!net_policy_blocks_all(&p) && !net_policy_is_open(&p));
	CHECK(net_policy_allows_name(&p, "world.test") && net_policy_allows_name(&p, "WORLD.test"));
	CHECK(!net_policy_allows_name(&p, "a.world.test") && !net_policy_allows_name(&p, "world.testx"));
	CHECK(net_policy_allows_name(&p, "v1.api.example") && net_policy_allows_name(&p, "a.b.api.example"));
	CHECK(!net_policy_allows_name(&p, "api.example") && !net_policy_allows_name(&p, "xapi.example"));
	net_policy_free(&p);
	CHECK(parse("[\"world.test\"]", NULL, 0, &p, &err) ==
		0); /* allow_internet_access false blocks all too */
	net_policy_free(&p);
	refused("[\"example.com\"]", NULL, "you must include 'ALL_TRAFFIC' in deny out");
	refused("[\"example.com\"]", "[\"10.0.0.0/8\"]", "you must include 'ALL_TRAFFIC'");
	refused("[\"bad_name\"]", "[\"0.0.0.0/0\"]", "invalid allowed address bad_name");
	refused("[\"-a.example\"]", "[\"0.0.0.0/0\"]", "invalid allowed address");
	refused("[\"a..example\"]", "[\"0.0.0.0/0\"]", "invalid allowed address");
	refused("[\"*\"]", "[\"0.0.0.0/0\"]", "invalid allowed address");
	refused("[\"2001:db8::1\"]", NULL, "IPv6 is not routed");
	refused("[1]", NULL, "must be an array of strings");
	refused("{}", NULL, "must be an array of strings");

	/* Addresses through the lists: allow beats deny, nothing listed passes. */
	CHECK(parse("[\"203.0.113.10\", \"world.test\"]", "[\"0.0.0.0/0\"]", -1, &p, &err) == 0);
	CHECK(net_policy_allows_address(&p, 0xcb00710au));
	CHECK(!net_policy_allows_address(&p, 0xcb00710bu));
	CHECK(net_policy_allows_name(&p, "world.test") && !net_policy_allows_name(&p, "api.world.test"));
	net_policy_free(&p);
	CHECK(parse(NULL, "[\"10.0.0.0/8\"]", -1, &p, &err) == 0);
	CHECK(!net_policy_allows_address(&p, 0x0a010203u) && net_policy_allows_address(&p, 0x0b000001u));
	net_policy_free(&p);

	/* The shared ranges: metadata, loopback, multicast never; the LAN ranges; a public address in neither. */
	CHECK(net_policy_in_ranges(net_policy_never, NET_POLICY_NEVER_RANGES, 0xa9fea9feu));
	CHECK(net_policy_in_ranges(net_policy_never, NET_POLICY_NEVER_RANGES, 0x7f000001u));
	CHECK(net_policy_in_ranges(net_policy_never, NET_POLICY_NEVER_RANGES, 0xffffffffu));
	CHECK(net_policy_in_ranges(net_policy_lan, NET_POLICY_LAN_RANGES, 0xac1f0001u));
	CHECK(net_policy_in_ranges(net_policy_lan, NET_POLICY_LAN_RANGES, 0x647fffffu));
	CHECK(!net_policy_in_ranges(net_policy_lan, NET_POLICY_LAN_RANGES, 0xac200000u));
	CHECK(!net_policy_in_ranges(net_policy_never, NET_POLICY_NEVER_RANGES, 0xcb00710au) &&
		!net_policy_in_ranges(net_policy_lan, NET_POLICY_LAN_RANGES, 0xcb00710au));

	/* egressProxy: host:port, credentials, what getInfo shows. */
	struct net_tunnel t;
	cJSON *j = cJSON_Parse(
		"{\"address\":\"Proxy.Example.com:1080\",\"username\":\"u\",\"password\":\"pw-s3cret\"}");
	CHECK(net_tunnel_parse(j, &t, &err) == 0 && t.set && t.port == 1080);
	CHECK_STR(t.host, "proxy.example.com");
	cJSON *shown = net_tunnel_to_json(&t);
	text = cJSON_PrintUnformatted(shown);
	CHECK_STR(text, "{\"address\":\"proxy.example.com:1080\",\"username\":\"u\"}");
	free(text);
	cJSON_Delete(shown);
	net_tunnel_free(&t);
	cJSON_Delete(j);
	const char *bad_tunnels[] = {"{\"address\":\"x\"}", "{\"address\":\"[::1]:80\"}",
		"{\"address\":\"1.2.3.4:0\"}", "{\"address\":\"a.b:65536\"}", "{\"address\":\"*.b:80\"}",
		"{\"address\":\"a.b:80\",\"password\":\"pw-s3cret\"}",
		"{\"address\":\"a.b:80\",\"username\":\"\"}", "\"a.b:80\"", "{}", "{\"address\":\"a.b: 80\"}",
		"{\"address\":\"a.b:+80\"}", "{\"address\":\"a.b:80 \"}"};
	for (size_t i = 0; i < sizeof bad_tunnels / sizeof bad_tunnels[0]; i++) {
		j = cJSON_Parse(bad_tunnels[i]);
		CHECK(net_tunnel_parse(j, &t, &err) == -1 && !t.set && !strstr(err.msg, "pw-s3cret"));
		cJSON_Delete(j);
	}
	CHECK(net_tunnel_parse(NULL, &t, &err) == 0 && !t.set);

	struct net_cidr c;
	CHECK(net_pool_parse_subnet("100.96.1.2/16", &c) == 0 && c.addr == 0x64600000u && c.prefix == 16);
	CHECK(net_pool_parse_subnet("100.96.0.0", &c) == -1);
	CHECK(net_pool_parse_subnet("100.96.0.0/31", &c) == -1);
	CHECK(net_pool_parse_subnet("100.96.0.0/7", &c) == -1);
	CHECK(net_pool_parse_subnet("::/64", &c) == -1);
}
