/* The Host of a peeked HTTP/1.x request head (egress_host.h). */
#include "egress/egress_host.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* Where the line starting at from ends (its CR), or NULL: more is needed,
 * or *bad when a lone CR or LF is in it. */
static const unsigned char *line_end(const unsigned char *from, const unsigned char *end, bool *bad)
{
	for (const unsigned char *p = from; p < end; p++) {
		if (*p == '\n') {
			*bad = true;
			return NULL;
		}
		if (*p == '\r') {
			if (p + 1 == end)
				return NULL;
			if (p[1] != '\n')
				*bad = true;
			return *bad ? NULL : p;
		}
	}
	return NULL;
}

/* The request line: METHOD SP target SP HTTP/1.x, the target origin-form
 * or '*'. */
static bool request_line_ok(const unsigned char *p, size_t n)
{
	const unsigned char *sp = memchr(p, ' ', n);
	if (!sp || sp == p)
		return false;
	const unsigned char *target = sp + 1, *end = p + n;
	if (target >= end || (*target != '/' && *target != '*'))
		return false;
	const unsigned char *sp2 = memchr(target, ' ', (size_t)(end - target));
	return sp2 && end - (sp2 + 1) == 8 && memcmp(sp2 + 1, "HTTP/1.", 7) == 0;
}

/* value/n: a Host value with its whitespace trimmed. */
static bool copy_name(const unsigned char *v, size_t n, char *name, size_t cap)
{
	if (n && v[0] == '[')
		return false; /* an IPv6 literal: no domain matches one */
	const unsigned char *colon = memchr(v, ':', n);
	if (colon) {
		size_t digits = n - (size_t)(colon + 1 - v);
		if (digits == 0 || digits > 5)
			return false;
		for (const unsigned char *d = colon + 1; d < v + n; d++)
			if (*d < '0' || *d > '9')
				return false;
		n = (size_t)(colon - v);
	}
	if (n && v[n - 1] == '.')
		n--;
	if (n == 0 || n >= cap)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = v[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
			(c == '.' && i > 0 && v[i - 1] != '.');
		if (!ok)
			return false;
		name[i] = (char)c;
	}
	if (name[0] == '.' || name[n - 1] == '.')
		return false;
	name[n] = '\0';
	return true;
}

/* Whether the bytes so far can begin a request: a method of capitals (so
 * TLS or other binary on port 80 is told at once, not after a timeout). */
static bool method_so_far_ok(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n && p[i] != ' '; i++)
		if (p[i] < 'A' || p[i] > 'Z' || i >= 32)
			return false;
	return true;
}

bool egress_host_name(const char *value, char *name, size_t cap)
{
	return copy_name((const unsigned char *)value, strlen(value), name, cap);
}

enum egress_host_result egress_host_parse(const unsigned char *buf, size_t len, char *name, size_t cap)
{
	if (len > EGRESS_HOST_MAX_BYTES)
		len = EGRESS_HOST_MAX_BYTES;
	const unsigned char *end = buf + len, *p = buf;
	bool bad = !method_so_far_ok(buf, len);
	const unsigned char *eol = line_end(p, end, &bad);
	if (bad || (eol && !request_line_ok(p, (size_t)(eol - p))))
		return EGRESS_HOST_BAD;
	if (!eol)
		return len == EGRESS_HOST_MAX_BYTES ? EGRESS_HOST_BAD : EGRESS_HOST_MORE;
	const unsigned char *host = NULL;
	size_t host_len = 0;
	for (p = eol + 2;; p = eol + 2) {
		eol = line_end(p, end, &bad);
		if (bad)
			return EGRESS_HOST_BAD;
		if (!eol)
			return len == EGRESS_HOST_MAX_BYTES ? EGRESS_HOST_BAD : EGRESS_HOST_MORE;
		if (eol == p)
			break; /* the blank line: the head is whole */
		if (*p == ' ' || *p == '\t')
			return EGRESS_HOST_BAD; /* obs-fold */
		const unsigned char *colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon || colon == p || colon[-1] == ' ' || colon[-1] == '\t')
			return EGRESS_HOST_BAD;
		if (colon - p != 4 || strncasecmp((const char *)p, "host", 4) != 0)
			continue;
		if (host)
			return EGRESS_HOST_BAD;
		host = colon + 1;
		while (host < eol && (*host == ' ' || *host == '\t'))
			host++;
		host_len = (size_t)(eol - host);
		while (host_len && (host[host_len - 1] == ' ' || host[host_len - 1] == '\t'))
			host_len--;
	}
	if (!host || !copy_name(host, host_len, name, cap))
		return EGRESS_HOST_BAD;
	return EGRESS_HOST_FOUND;
}
