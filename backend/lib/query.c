/* Strict URL query parsing. */
#include "lib/query.h"

#include <stdlib.h>
#include <string.h>

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *query_percent_decode(const char *s, size_t len, bool plus_is_space)
{
	char *out = malloc(len + 1);
	if (!out)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '%') {
			if (len - i < 3) { /* fewer than two characters follow */
				free(out);
				return NULL;
			}
			int h = hex_value(s[i + 1]), l = hex_value(s[i + 2]);
			/* %00 would silently cut the C string short: refuse it. */
			if (h < 0 || l < 0 || (h == 0 && l == 0)) {
				free(out);
				return NULL;
			}
			out[n++] = (char)(h * 16 + l);
			i += 2;
		} else if (c == '+' && plus_is_space) {
			out[n++] = ' ';
		} else {
			out[n++] = c;
		}
	}
	out[n] = '\0';
	return out;
}

void query_free(struct query *q)
{
	for (size_t i = 0; i < q->count; i++) {
		free(q->pairs[i].key);
		free(q->pairs[i].value);
	}
	free(q->pairs);
	q->pairs = NULL;
	q->count = 0;
}

int query_parse(const char *raw, struct query *out)
{
	out->pairs = NULL;
	out->count = 0;
	if (!raw || !*raw)
		return 0;
	size_t cap = 1;
	for (const char *p = raw; *p; p++)
		cap += *p == '&';
	out->pairs = calloc(cap, sizeof *out->pairs);
	if (!out->pairs)
		return -1;
	const char *p = raw;
	while (*p) {
		size_t seg = strcspn(p, "&");
		if (seg > 0) {
			const char *eq = memchr(p, '=', seg);
			size_t klen = eq ? (size_t)(eq - p) : seg;
			struct query_pair *pair = &out->pairs[out->count];
			pair->key = query_percent_decode(p, klen, true);
			pair->value = eq ? query_percent_decode(eq + 1, seg - klen - 1, true) : strdup("");
			if (!pair->key || !pair->value) {
				out->count++; /* so query_free releases the half-made pair */
				query_free(out);
				return -1;
			}
			out->count++;
		}
		p += seg;
		if (*p == '&')
			p++;
	}
	return 0;
}

const char *query_get(const struct query *q, const char *key)
{
	for (size_t i = 0; i < q->count; i++)
		if (strcmp(q->pairs[i].key, key) == 0)
			return q->pairs[i].value;
	return NULL;
}

int query_number(const struct query *q, const char *key, long long min, long long max, long long *out)
{
	const char *v = query_get(q, key);
	if (!v)
		return 0;
	size_t digits = strspn(v, "0123456789");
	if (digits == 0 || digits > 18 || v[digits]) /* 18 digits fit a long long */
		return -1;
	long long n = strtoll(v, NULL, 10);
	if (n < min || n > max)
		return -1;
	*out = n;
	return 1;
}
