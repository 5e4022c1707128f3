/* A whole request head: the request line and header lines checked (RFC 9112
 * sections 3 and 5, strictly), the body's framing chosen once (section 6.3,
 * refusing every ambiguity), the headers to set asked for and checked, and
 * the head rebuilt from the original bytes of what is kept. */
#include "egress/egress_http_head.h"

#include "lib/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A header line: offsets into the head, the line without its CRLF. */
struct field {
	size_t line, end;
	size_t name_len;
	size_t value, value_end; /* trimmed of OWS */
};

struct head_facts {
	bool http10, connect;
	bool cl_seen, te_seen, te_chunked_last, conn_upgrade, upgrade;
	uint64_t length;
	const struct field *host;
};

bool egress_http_head_tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
		return true;
	return ch != 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static bool ows(unsigned char ch)
{
	return ch == ' ' || ch == '\t';
}

/* field-vchar (with obs-text), SP or HTAB: no NUL, no other control byte, no DEL. */
static bool value_char(unsigned char ch)
{
	return ch == '\t' || (ch >= 0x20 && ch != 0x7f);
}

static unsigned char lower(unsigned char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch + ('a' - 'A')) : ch;
}

static bool span_is(const unsigned char *s, size_t n, const char *lit)
{
	if (n != strlen(lit))
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(s[i]) != lower((unsigned char)lit[i]))
			return false;
	return true;
}

/* The next element of a comma-separated list in s[*at..end), trimmed;
 * empty elements are skipped (RFC 9110 section 5.6.1). False at the end. */
static bool list_next(const unsigned char *s, size_t *at, size_t end, size_t *el, size_t *el_end)
{
	while (*at < end) {
		size_t a = *at, b = a;
		while (b < end && s[b] != ',')
			b++;
		*at = b < end ? b + 1 : end;
		size_t z = b;
		while (a < z && ows(s[a]))
			a++;
		while (z > a && ows(s[z - 1]))
			z--;
		if (a < z) {
			*el = a;
			*el_end = z;
			return true;
		}
	}
	return false;
}

/* METHOD SP request-target SP HTTP/1.x */
static bool request_line(const unsigned char *s, size_t n, struct head_facts *f)
{
	size_t i = 0;
	while (i < n && egress_http_head_tchar(s[i]))
		i++;
	if (i == 0 || i == n || s[i] != ' ')
		return false;
	f->connect = i == 7 && memcmp(s, "CONNECT", 7) == 0;
	size_t target = ++i;
	while (i < n && s[i] > 0x20 && s[i] < 0x7f)
		i++;
	if (i == target || i == n || s[i] != ' ')
		return false;
	i++;
	if (n - i != 8 || memcmp(s + i, "HTTP/1.", 7) != 0 || (s[i + 7] != '0' && s[i + 7] != '1'))
		return false;
	f->http10 = s[i + 7] == '0';
	return true;
}

/* name ":" OWS value OWS, where the line is s[line..end). 0, or -1 with
 * why not in err. */
static int field_line(const unsigned char *s, size_t line, size_t end, struct field *fl, struct err *err)
{
	if (ows(s[line]))
		return err_set(err, 0, "a header line is folded (obs-fold)");
	size_t i = line;
	while (i < end && egress_http_head_tchar(s[i]))
		i++;
	if (i == line)
		return err_set(err, 0, "a header line has no name");
	if (i == end || s[i] != ':') {
		size_t k = i;
		while (k < end && ows(s[k]))
			k++;
		return err_set(err, 0, "%s",
			k > i && k < end && s[k] == ':'
				? "a header name is followed by a space before its colon"
				: "a header line has no colon");
	}
	fl->line = line;
	fl->end = end;
	fl->name_len = i - line;
	for (size_t k = i + 1; k < end; k++)
		if (!value_char(s[k]))
			return err_set(err, 0, "a header value holds a control byte");
	size_t a = i + 1, z = end;
	while (a < z && ows(s[a]))
		a++;
	while (z > a && ows(s[z - 1]))
		z--;
	fl->value = a;
	fl->value_end = z;
	return 0;
}

/* Content-Length: a list of equal decimal numbers, each equal to any seen before. */
static int content_length(const unsigned char *s, const struct field *fl, struct head_facts *f,
	struct err *err)
{
	size_t at = fl->value, a, z;
	bool any = false;
	while (list_next(s, &at, fl->value_end, &a, &z)) {
		uint64_t v = 0;
		for (size_t i = a; i < z; i++) {
			if (s[i] < '0' || s[i] > '9')
				return err_set(err, 0, "a Content-Length is not a number");
			v = v * 10 + (uint64_t)(s[i] - '0');
			if (v > EGRESS_HTTP_LENGTH_MAX)
				return err_set(err, 0, "a Content-Length is over 2^53");
		}
		if (f->cl_seen && v != f->length)
			return err_set(err, 0, "the request has differing Content-Lengths");
		f->cl_seen = true;
		f->length = v;
		any = true;
	}
	return any ? 0 : err_set(err, 0, "a Content-Length is empty");
}

/* What the header lines say about the body, the Host and an upgrade. */
static int facts(const unsigned char *s, const struct field *fields, size_t n, struct head_facts *f,
	struct err *err)
{
	for (size_t k = 0; k < n; k++) {
		const struct field *fl = &fields[k];
		const unsigned char *name = s + fl->line;
		size_t at = fl->value, a, z;
		if (span_is(name, fl->name_len, "content-length")) {
			if (content_length(s, fl, f, err) != 0)
				return -1;
		} else if (span_is(name, fl->name_len, "transfer-encoding")) {
			f->te_seen = true;
			while (list_next(s, &at, fl->value_end, &a, &z)) {
				if (f->te_chunked_last)
					return err_set(err, 0, "a transfer coding follows chunked");
				f->te_chunked_last = span_is(s + a, z - a, "chunked");
			}
		} else if (span_is(name, fl->name_len, "host")) {
			if (f->host)
				return err_set(err, 0, "the request has two Host headers");
			f->host = fl;
		} else if (span_is(name, fl->name_len, "connection")) {
			while (list_next(s, &at, fl->value_end, &a, &z))
				f->conn_upgrade |= span_is(s + a, z - a, "upgrade");
		} else if (span_is(name, fl->name_len, "upgrade")) {
			f->upgrade |= fl->value < fl->value_end;
		}
	}
	if (f->te_seen && f->http10)
		return err_set(err, 0, "an HTTP/1.0 request has a Transfer-Encoding");
	if (f->te_seen && f->cl_seen)
		return err_set(err, 0, "the request has both Content-Length and Transfer-Encoding");
	if (f->te_seen && !f->te_chunked_last)
		return err_set(err, 0, "the request's last transfer coding is not chunked");
	return 0;
}

/* The headers fn gave: tokens for names, values that can be sent, nothing that frames. */
static enum egress_http_status check_set(const struct egress_header *set, size_t n, struct err *err)
{
	static const char *const framing[] = {"content-length", "transfer-encoding", "connection", "upgrade"};
	for (size_t k = 0; k < n; k++) {
		const char *name = set[k].name, *value = set[k].value;
		bool token = name && *name;
		for (const char *c = name; token && *c; c++)
			token = egress_http_head_tchar((unsigned char)*c);
		if (!token) {
			err_set(err, 0, "a header to set has a name that is not a token");
			return EGRESS_HTTP_REFUSED;
		}
		for (size_t i = 0; i < sizeof framing / sizeof framing[0]; i++)
			if (span_is((const unsigned char *)name, strlen(name), framing[i])) {
				err_set(err, 0, "header %.64s cannot be set: it frames the stream", name);
				return EGRESS_HTTP_REFUSED;
			}
		bool sendable = value != NULL;
		for (const char *c = value; sendable && *c; c++)
			sendable = *c == '\t' || ((unsigned char)*c >= 0x20 && *c != 0x7f);
		if (!sendable) {
			err_set(err, 0, "header %.64s has a value that cannot be sent", name);
			return EGRESS_HTTP_REFUSED;
		}
	}
	return EGRESS_HTTP_OK;
}

static bool replaced(const unsigned char *s, const struct field *fl, const struct egress_header *set,
	size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (span_is(s + fl->line, fl->name_len, set[k].name))
			return true;
	return false;
}

/* The request line and the kept lines as they came, the set headers, the blank line. */
static unsigned char *rebuild(const unsigned char *s, size_t request_end, const struct field *fields,
	size_t nf, const struct egress_header *set, size_t n, size_t *out_len)
{
	size_t size = request_end + 2 + 2;
	for (size_t k = 0; k < nf; k++)
		size += fields[k].end - fields[k].line + 2;
	for (size_t k = 0; k < n; k++)
		size += strlen(set[k].name) + 2 + strlen(set[k].value) + 2;
	unsigned char *out = malloc(size), *w = out;
	if (!out)
		return NULL;
	memcpy(w, s, request_end + 2);
	w += request_end + 2;
	for (size_t k = 0; k < nf; k++) {
		if (replaced(s, &fields[k], set, n))
			continue;
		memcpy(w, s + fields[k].line, fields[k].end - fields[k].line + 2);
		w += fields[k].end - fields[k].line + 2;
	}
	for (size_t k = 0; k < n; k++) {
		size_t a = strlen(set[k].name), b = strlen(set[k].value);
		memcpy(w, set[k].name, a);
		memcpy(w + a, ": ", 2);
		memcpy(w + a + 2, set[k].value, b);
		memcpy(w + a + 2 + b, "\r\n", 2);
		w += a + b + 4;
	}
	memcpy(w, "\r\n", 2);
	*out_len = (size_t)(w + 2 - out);
	return out;
}

/* Asks fn for this request's headers, with the Host value as a string. */
static enum egress_http_status ask(egress_http_headers_fn fn, void *ctx, const unsigned char *s,
	const struct field *host, const struct egress_header **set, size_t *n, struct err *err)
{
	*set = NULL;
	*n = 0;
	if (!fn)
		return EGRESS_HTTP_OK;
	char *h = NULL;
	if (host) {
		size_t len = host->value_end - host->value;
		if (!(h = malloc(len + 1))) {
			err_set(err, 0, "out of memory");
			return EGRESS_HTTP_BAD;
		}
		memcpy(h, s + host->value, len);
		h[len] = '\0';
	}
	err_clear(err);
	int rc = fn(ctx, h, set, n, err);
	free(h);
	if (rc != 0) {
		if (err && !err->msg[0])
			err_set(err, 0, "the request was refused");
		return EGRESS_HTTP_REFUSED;
	}
	if (!*set)
		*n = 0;
	return check_set(*set, *n, err);
}

enum egress_http_status egress_http_head_rewrite(const unsigned char *head, size_t len,
	egress_http_headers_fn fn, void *ctx, struct egress_http_framing *framing, unsigned char **out,
	size_t *out_len, struct err *err)
{
	struct field fields[EGRESS_HTTP_HEADERS_MAX];
	struct head_facts f = {0};
	int bad = 0;
	size_t nf = 0;
	const unsigned char *cr = memchr(head, '\r', len);
	size_t request_end = (size_t)(cr - head);
	if (!request_line(head, request_end, &f))
		bad = err_set(err, 0, "the request line is not METHOD target HTTP/1.x");
	for (size_t at = request_end + 2; !bad && at < len - 2; nf++) {
		size_t end = (size_t)((const unsigned char *)memchr(head + at, '\r', len - at) - head);
		if (nf == EGRESS_HTTP_HEADERS_MAX)
			bad = err_set(err, 0, "the request has more than 100 headers");
		else
			bad = field_line(head, at, end, &fields[nf], err);
		at = end + 2;
	}
	if (!bad)
		bad = facts(head, fields, nf, &f, err);
	if (bad)
		return EGRESS_HTTP_BAD;
	const struct egress_header *set;
	size_t n;
	enum egress_http_status st = ask(fn, ctx, head, f.host, &set, &n, err);
	if (st != EGRESS_HTTP_OK)
		return st;
	if (!(*out = rebuild(head, request_end, fields, nf, set, n, out_len))) {
		err_set(err, 0, "out of memory");
		return EGRESS_HTTP_BAD;
	}
	framing->chunked = f.te_seen;
	framing->length = f.cl_seen ? f.length : 0;
	framing->passthrough = f.connect || (f.conn_upgrade && f.upgrade);
	return EGRESS_HTTP_OK;
}
