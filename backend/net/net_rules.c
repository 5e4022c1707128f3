/* E2B's egress transform rules (net_rules.h). */
#include "net/net_rules.h"

#include "lib/err.h"
#include "net/net_name.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An HTTP field name (a token, RFC 9110) a rule may set: not one that
 * frames the message or the connection. */
static bool header_name_ok(const char *s)
{
	static const char *const framing[] = {"Content-Length", "Transfer-Encoding", "Connection", "Upgrade"};
	for (size_t i = 0; i < sizeof framing / sizeof framing[0]; i++)
		if (strcasecmp(s, framing[i]) == 0)
			return false;
	size_t n = strlen(s);
	if (n == 0 || n > 256)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
			!strchr("!#$%&'*+-.^_`|~", c))
			return false;
	}
	return true;
}

/* A field value that can be sent as it is: visible ASCII, spaces and tabs. */
static bool header_value_ok(const char *s)
{
	size_t n = strlen(s);
	if (n > NET_RULES_MAX_VALUE)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c >= 0x7f)
			return false;
	}
	return true;
}

/* Sets name: value in set, replacing one of the same name (any case). */
static int set_header(struct net_rule_set *set, const char *name, const char *value)
{
	for (size_t i = 0; i < set->n_headers; i++) {
		if (strcasecmp(set->headers[i].name, name) != 0)
			continue;
		char *v = strdup(value);
		if (!v)
			return -1;
		free(set->headers[i].value);
		set->headers[i].value = v;
		return 0;
	}
	if (set->n_headers == NET_RULES_MAX_HEADERS)
		return -2;
	struct net_rule_header *h = realloc(set->headers, (set->n_headers + 1) * sizeof *h);
	if (!h)
		return -1;
	set->headers = h;
	h[set->n_headers] = (struct net_rule_header){strdup(name), strdup(value)};
	if (!h[set->n_headers].name || !h[set->n_headers].value) {
		free(h[set->n_headers].name);
		free(h[set->n_headers].value);
		return -1;
	}
	set->n_headers++;
	return 0;
}

/* The rules of one key into set; -1 with err. */
static int read_set(const char *key, const cJSON *list, struct net_rule_set *set, struct err *err)
{
	if (!cJSON_IsArray(list)) {
		err_set(err, 0, "network rules for '%s' must be a list of rules", key);
		return -1;
	}
	if (cJSON_GetArraySize(list) > NET_RULES_MAX_RULES) {
		err_set(err, 0, "network rules for '%s': at most %d rules", key, NET_RULES_MAX_RULES);
		return -1;
	}
	const cJSON *rule;
	cJSON_ArrayForEach(rule, list) {
		if (!cJSON_IsObject(rule)) {
			err_set(err, 0, "network rules for '%s': each rule must be an object", key);
			return -1;
		}
		const cJSON *transform = cJSON_GetObjectItemCaseSensitive(rule, "transform");
		if (!transform || cJSON_IsNull(transform))
			continue;
		const cJSON *headers = cJSON_IsObject(transform)
			? cJSON_GetObjectItemCaseSensitive(transform, "headers")
			: NULL;
		if (!cJSON_IsObject(transform) ||
			(headers && !cJSON_IsNull(headers) && !cJSON_IsObject(headers))) {
			err_set(err, 0,
				"network rules for '%s': transform must be an object "
				"whose headers are an object of strings",
				key);
			return -1;
		}
		const cJSON *h, *set_headers = cJSON_IsObject(headers) ? headers : NULL;
		cJSON_ArrayForEach(h, set_headers) {
			if (!header_name_ok(h->string)) {
				err_set(err, 0,
					"network rules for '%s': '%.64s' is not a header name a rule "
					"may set (a token, not Content-Length, Transfer-Encoding, Connection or Upgrade)",
					key, h->string);
				return -1;
			}
			if (!cJSON_IsString(h) || !header_value_ok(h->valuestring)) {
				/* The value may be a credential: never quoted. */
				err_set(err, 0,
					"network rules for '%s': the value of header %s must be "
					"a string of at most %d printable ASCII characters",
					key, h->string, NET_RULES_MAX_VALUE);
				return -1;
			}
			if (strstr(h->valuestring, NET_RULES_IDENTITY_OPEN)) {
				err_set(err, 0,
					"network rules for '%s': workload identity tokens "
					"(${e2b.identity.tokens.*}) are not supported by the local backend",
					key);
				return -1;
			}
			int rc = set_header(set, h->string, h->valuestring);
			if (rc == -2) {
				err_set(err, 0, "network rules for '%s': at most %d headers", key,
					NET_RULES_MAX_HEADERS);
				return -1;
			}
			if (rc != 0) {
				err_set(err, 0, "out of memory");
				return -1;
			}
		}
	}
	return 0;
}

int net_rules_parse(const cJSON *rules, struct net_rules *out, struct err *err)
{
	memset(out, 0, sizeof *out);
	if (!rules || cJSON_IsNull(rules))
		return 0;
	if (!cJSON_IsObject(rules)) {
		err_set(err, 0, "network rules must be an object of domain names to lists of rules");
		return -1;
	}
	int count = cJSON_GetArraySize(rules);
	if (count > NET_RULES_MAX_KEYS) {
		err_set(err, 0, "network rules: at most %d domains", NET_RULES_MAX_KEYS);
		return -1;
	}
	out->sets = calloc(count ? (size_t)count : 1, sizeof *out->sets);
	out->given = cJSON_CreateObject();
	if (!out->sets || !out->given) {
		net_rules_free(out);
		err_set(err, 0, "out of memory");
		return -1;
	}
	const cJSON *item;
	cJSON_ArrayForEach(item, rules) {
		char name[256];
		if (strcmp(item->string, "*") == 0 || !net_name_domain(item->string, name, sizeof name)) {
			err_set(err, 0,
				"network rules: '%.64s' is not a domain name or a leading "
				"wildcard of one (such as \"*.example.com\"); rules match the TLS server name",
				item->string);
			net_rules_free(out);
			return -1;
		}
		for (size_t i = 0; i < out->n; i++) {
			if (strcmp(out->sets[i].pattern, name) == 0) {
				err_set(err, 0, "network rules: '%s' is given twice", name);
				net_rules_free(out);
				return -1;
			}
		}
		struct net_rule_set *set = &out->sets[out->n];
		set->pattern = strdup(name);
		out->n++;
		if (!set->pattern || read_set(name, item, set, err) != 0 ||
			!cJSON_AddItemToObject(out->given, name, cJSON_Duplicate(item, 1))) {
			if (!set->pattern)
				err_set(err, 0, "out of memory");
			net_rules_free(out);
			return -1;
		}
	}
	return 0;
}

void net_rules_free(struct net_rules *r)
{
	for (size_t i = 0; i < r->n; i++) {
		for (size_t j = 0; j < r->sets[i].n_headers; j++) {
			free(r->sets[i].headers[j].name);
			free(r->sets[i].headers[j].value);
		}
		free(r->sets[i].headers);
		free(r->sets[i].pattern);
	}
	free(r->sets);
	cJSON_Delete(r->given);
	memset(r, 0, sizeof *r);
}

const struct net_rule_set *net_rules_match(const struct net_rules *r, const char *host)
{
	const struct net_rule_set *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < r->n; i++) {
		const char *p = r->sets[i].pattern;
		if (!net_name_matches(p, host))
			continue;
		if (strncmp(p, "*.", 2) != 0)
			return &r->sets[i]; /* exact wins */
		if (strlen(p) > best_len) {
			best = &r->sets[i];
			best_len = strlen(p);
		}
	}
	return best;
}
