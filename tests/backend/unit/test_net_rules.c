/* net/net_rules.c: E2B's transform rules parsed with their 400 messages
 * (never quoting a header's value), merged per key, and matched by server
 * name: an exact key first, then the longest wildcard, never the apex. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/err.h"
#include "net/net_rules.h"
#include "suites.h"

static int parse(const char *json, struct net_rules *r, struct err *err)
{
	cJSON *j = json ? cJSON_Parse(json) : NULL;
	int rc = net_rules_parse(j, r, err);
	cJSON_Delete(j);
	return rc;
}

static void refused(const char *json, const char *message)
{
	struct net_rules r;
	struct err err;
	err_clear(&err);
	CHECK(parse(json, &r, &err) == -1);
	CHECK(strstr(err.msg, message) != NULL);
	if (!strstr(err.msg, message))
		fprintf(stderr, "    message: %s\n", err.msg);
	CHECK(strstr(err.msg, "s3cr3t") == NULL); /* a value is never quoted */
}

static const char *header(const struct net_rule_set *set, const char *name)
{
	for (size_t i = 0; set && i < set->n_headers; i++)
		if (strcmp(set->headers[i].name, name) == 0)
			return set->headers[i].value;
	return NULL;
}

void suite_net_rules(void)
{
	struct net_rules r;
	struct err err;
	CHECK(parse(NULL, &r, &err) == 0 && r.n == 0 && !r.given);
	CHECK(parse("null", &r, &err) == 0 && r.n == 0);

	/* keys lowercased; rules of one key merged in order, later headers win (any case) */
	CHECK(parse("{\"API.Example.com\":[{\"transform\":{\"headers\":{\"Authorization\":\"a\",\"X-One\":\"1\"}}},"
		    "{\"transform\":{\"headers\":{\"authorization\":\"b\"}}},{}],"
		    "\"*.example.com\":[{\"transform\":{\"headers\":{\"X-Wild\":\"w\"}}}],"
		    "\"*.deep.example.com\":[{\"transform\":{\"headers\":{\"X-Deep\":\"d\"}}}]}",
		      &r, &err) == 0);
	CHECK_NUM(r.n, 3);
	const struct net_rule_set *api = net_rules_match(&r, "api.example.com");
	CHECK(api && strcmp(api->pattern, "api.example.com") == 0);
	CHECK_NUM(api ? api->n_headers : 0, 2);
	CHECK_STR(header(api, "Authorization"), "b");
	CHECK_STR(header(api, "X-One"), "1");
	CHECK_STR(header(net_rules_match(&r, "a.b.example.com"), "X-Wild"), "w");
	CHECK_STR(header(net_rules_match(&r, "x.deep.example.com"), "X-Deep"),
		"d");                                      /* the longest wildcard */
	CHECK(net_rules_match(&r, "example.com") == NULL); /* never the apex */
	CHECK(net_rules_match(&r, "badexample.com") == NULL);
	CHECK(net_rules_match(&r, "example.org") == NULL);
	char *given = cJSON_PrintUnformatted(r.given);
	CHECK(strstr(given, "\"api.example.com\":[") != NULL);
	free(given);
	net_rules_free(&r);

	/* an empty rule set matches (and sets nothing) */
	CHECK(parse("{\"x.test\":[]}", &r, &err) == 0);
	CHECK(net_rules_match(&r, "x.test") && net_rules_match(&r, "x.test")->n_headers == 0);
	net_rules_free(&r);

	refused("[]", "must be an object");
	refused("{\"*\":[]}", "is not a domain name");
	refused("{\"a..b\":[]}", "is not a domain name");
	refused("{\"a.test\":{}}", "must be a list of rules");
	refused("{\"a.test\":[1]}", "each rule must be an object");
	refused("{\"a.test\":[{\"transform\":[]}]}", "transform must be an object");
	refused("{\"a.test\":[{\"transform\":{\"headers\":{\"Bad Name\":\"s3cr3t\"}}}]}",
		"is not a header name");
	refused("{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"s3cr3t\\r\\nX: y\"}}}]}",
		"must be a string");
	refused("{\"a.test\":[{\"transform\":{\"headers\":{\"A\":7}}}]}", "must be a string");
	refused("{\"a.test\":[{\"transform\":{\"headers\":{\"content-length\":\"5\"}}}]}",
		"not Content-Length");
	refused("{\"a.test\":[{\"transform\":{\"headers\":{\"A\":\"${e2b.identity.tokens.aws} s3cr3t\"}}}]}",
		"workload identity tokens");
	refused("{\"A.test\":[],\"a.test\":[]}", "is given twice");
}
