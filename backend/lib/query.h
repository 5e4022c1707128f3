/* Strict URL query parsing. evhttp's own decoder passes bad escapes such as
 * "%zz" through unchanged; E2B (Go's url.QueryUnescape) rejects them with a
 * 400, and so do we. */
#ifndef E2B_BACKEND_QUERY_STRING_H
#define E2B_BACKEND_QUERY_STRING_H

#include <stdbool.h>
#include <stddef.h>

struct query_pair {
	char *key;
	char *value;
};

struct query {
	struct query_pair *pairs;
	size_t count;
};

/* Decodes len bytes of s: %XX escapes, and '+' as a space when
 * plus_is_space. A fresh string, or NULL for a malformed escape, an encoded
 * NUL, or no memory. */
char *query_percent_decode(const char *s, size_t len, bool plus_is_space);

/* Splits "a=1&b=2" (raw may be NULL) into decoded pairs; "a" alone gets
 * value "". 0 on success, -1 on a malformed escape. Free with query_free. */
int query_parse(const char *raw, struct query *out);
void query_free(struct query *q);

/* The first value for key, or NULL. */
const char *query_get(const struct query *q, const char *key);

/* The first value for key as a decimal number from min to max (min >= 0):
 * 1 read into *out, 0 absent (*out unchanged), -1 anything else: empty, a
 * sign, a space, other characters, out of range. (strtol alone would take
 * " 5" and "+5".) */
int query_number(const struct query *q, const char *key, long long min, long long max, long long *out);

#endif
