/* egress/egress_http.c: every example fed whole, a byte at a time and at
 * every split point of two chunks, with the same bytes emitted, the same
 * verdict and the same Host values seen each way: single and pipelined
 * requests, Content-Length and chunked bodies (extensions, trailers),
 * headers replaced case-insensitively, a request without Host, each
 * request-smuggling vector, the limits, refusals, pass-through. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "egress/egress_http.h"
#include "lib/err.h"
#include "suites.h"

/* What the callback gives, and what a run saw. */
struct rules {
	const struct egress_header *set;
	size_t n;
	const char *refuse; /* refuse a request with this Host value */
};

struct seen {
	const struct rules *rules;
	char *out;
	size_t len, cap;
	char hosts[1024];
};

static void emit_cb(void *ctx, const void *bytes, size_t len)
{
	struct seen *s = ctx;
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2;
		s->out = realloc(s->out, s->cap);
	}
	memcpy(s->out + s->len, bytes, len);
	s->len += len;
}

static int headers_cb(void *ctx, const char *host, const struct egress_header **headers, size_t *n,
	struct err *err)
{
	struct seen *s = ctx;
	size_t at = strlen(s->hosts);
	snprintf(s->hosts + at, sizeof s->hosts - at, "%s|", host ? host : "(none)");
	if (s->rules->refuse && host && strcmp(host, s->rules->refuse) == 0) {
		return err_set(err, 0, "no rule lets this host be reached");
	}
	*headers = s->rules->set;
	*n = s->rules->n;
	return 0;
}

struct want {
	enum egress_http_status status;
	const char *out;   /* emitted, up to the error if there is one */
	size_t out_len;    /* 0: strlen(out) */
	const char *hosts; /* NULL: not checked */
	const char *why;   /* NULL: not checked */
	bool pass;
};

/* Feeds in at the cut points (each < len, ascending); checks the outcome. */
static bool run(const struct rules *rules, const char *in, size_t len, const size_t *cuts, size_t ncuts,
	const struct want *w, const char *how)
{
	struct seen s = {.rules = rules};
	struct egress_http *h = egress_http_new(headers_cb, emit_cb, &s);
	enum egress_http_status st = EGRESS_HTTP_OK;
	struct err why;
	err_clear(&why);
	size_t from = 0;
	for (size_t i = 0; i <= ncuts; i++) {
		size_t to = i < ncuts ? cuts[i] : len;
		st = egress_http_feed(h, in + from, to - from, &why);
		from = to;
	}
	size_t want_len = w->out_len ? w->out_len : strlen(w->out);
	bool ok = st == w->status && s.len == want_len && memcmp(s.out ? s.out : "", w->out, want_len) == 0 &&
		egress_http_passthrough(h) == w->pass && (!w->hosts || strcmp(s.hosts, w->hosts) == 0) &&
		(!w->why || strcmp(why.msg, w->why) == 0) && (st == EGRESS_HTTP_OK) == (why.msg[0] == '\0');
	if (ok && st != EGRESS_HTTP_OK) { /* an error stays, and emits nothing more */
		size_t before = s.len;
		struct err again;
		err_clear(&again);
		ok = egress_http_feed(h, "GET / HTTP/1.1\r\n\r\n", 18, &again) == st &&
			strcmp(again.msg, why.msg) == 0 && s.len == before;
	}
	if (!ok)
		fprintf(stderr, "  %s: status %d (%s), %zu bytes out: %.*s\n    hosts %s\n", how, st,
			why.msg[0] ? why.msg : "-", s.len, (int)(s.len < 400 ? s.len : 400),
			s.out ? s.out : "", s.hosts);
	egress_http_free(h);
	free(s.out);
	return ok;
}

/* Whole, a byte at a time, and at every split point of two chunks (every
 * step-th for long inputs). */
static bool every_chunking(const struct rules *rules, const char *in, size_t len, const struct want *w)
{
	bool ok = run(rules, in, len, NULL, 0, w, "whole");
	size_t *cuts = malloc(len * sizeof *cuts);
	for (size_t i = 1; i < len; i++)
		cuts[i - 1] = i;
	ok = ok && run(rules, in, len, cuts, len ? len - 1 : 0, w, "byte by byte");
	size_t step = len > 4096 ? 509 : 1;
	for (size_t i = 1; ok && i < len; i += step) {
		char how[64];
		snprintf(how, sizeof how, "split at %zu", i);
		ok = run(rules, in, len, &i, 1, w, how);
	}
	free(cuts);
	return ok;
}

static const struct egress_header auth[] = {{"Authorization", "Bearer sk-test"}};
static const struct rules AUTH = {auth, 1, NULL};

#define OK_CASE(in, out, hosts) \
	CHECK(every_chunking(&AUTH, in, strlen(in), \
		&(struct want){EGRESS_HTTP_OK, out, 0, hosts, NULL, false}))
#define BAD_CASE(in, out, why) \
	CHECK(every_chunking(&AUTH, in, strlen(in), \
		&(struct want){EGRESS_HTTP_BAD, out, 0, NULL, why, false}))

static void requests(void)
{
	OK_CASE("GET /v1/models HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: t/1\r\n\r\n",
		"GET /v1/models HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: t/1\r\nAuthorization: Bearer sk-test\r\n\r\n",
		"api.example.com|");
	/* replaced case-insensitively, every one of that name; OWS and the rest kept as sent */
	OK_CASE("GET / HTTP/1.1\r\nauthorization: old\r\nHost:  h.example \t\r\nX-A:b \r\nAUTHORIZATION:x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost:  h.example \t\r\nX-A:b \r\nAuthorization: Bearer sk-test\r\n\r\n",
		"h.example|");
	/* no Host, HTTP/1.0, an empty value, CRLFs before a request line dropped */
	OK_CASE("\r\n\r\nGET / HTTP/1.0\r\nX-Empty:\r\n\r\n",
		"GET / HTTP/1.0\r\nX-Empty:\r\nAuthorization: Bearer sk-test\r\n\r\n", "(none)|");
	/* pipelined: a body by Content-Length, a chunked one, a GET */
	OK_CASE("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello"
		"POST /b HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
		"5;name=\"v a\" ; x\r\nhello\r\n1A\r\n01234567890123456789012345\r\n0000\r\nX-T: 1\r\nx-u:\t2 \r\n\r\n"
		"GET /c HTTP/1.1\r\nHost: c\r\nContent-Length: 0\r\nContent-Length: 0, 0\r\n\r\n",
		"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\nAuthorization: Bearer sk-test\r\n\r\nhello"
		"POST /b HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: gzip, Chunked\r\nAuthorization: Bearer sk-test\r\n\r\n"
		"5;name=\"v a\" ; x\r\nhello\r\n1A\r\n01234567890123456789012345\r\n0000\r\nX-T: 1\r\nx-u:\t2 \r\n\r\n"
		"GET /c HTTP/1.1\r\nHost: c\r\nContent-Length: 0\r\nContent-Length: 0, 0\r\nAuthorization: Bearer sk-test\r\n\r\n",
		"a|b|c|");
	/* a chunk size with blanks before its end, an empty trailer section */
	OK_CASE("PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3 \t\r\nabc\r\n0\r\n\r\n",
		"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer sk-test\r\n\r\n3 \t\r\nabc\r\n0\r\n\r\n",
		"(none)|");
	/* a body is bytes, whatever they look like */
	OK_CASE("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n\r\nGET \n\0x\r\r\n",
		"POST / HTTP/1.1\r\nContent-Length: 12\r\nAuthorization: Bearer sk-test\r\n\r\n\r\nGET \n",
		"(none)|");
	/* the largest Content-Length is taken (the body is not all there) */
	OK_CASE("POST / HTTP/1.1\r\nContent-Length: 9007199254740992\r\n\r\nab",
		"POST / HTTP/1.1\r\nContent-Length: 9007199254740992\r\nAuthorization: Bearer sk-test\r\n\r\nab",
		NULL);
	/* no headers to set: the head as it came */
	static const struct rules none = {NULL, 0, NULL};
	const char *plain = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	CHECK(every_chunking(&none, plain, strlen(plain),
		&(struct want){EGRESS_HTTP_OK, plain, 0, "x|", NULL, false}));
	/* several set, one replacing a header of the request */
	static const struct egress_header two[] = {{"X-Api-Key", "k"}, {"user-agent", "proxy"}};
	static const struct rules tworules = {two, 2, NULL};
	const char *in = "GET / HTTP/1.1\r\nUser-Agent: curl\r\nAccept: */*\r\n\r\n";
	CHECK(every_chunking(&tworules, in, strlen(in),
		&(struct want){EGRESS_HTTP_OK,
			"GET / HTTP/1.1\r\nAccept: */*\r\nX-Api-Key: k\r\nuser-agent: proxy\r\n\r\n", 0, NULL,
			NULL, false}));
}

static void smuggling(void)
{
	BAD_CASE("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "", "a header line is folded (obs-fold)");
	BAD_CASE("GET / HTTP/1.1\nHost: x\r\n\r\n", "", "a line ends in LF without CR");
	BAD_CASE("GET / HTTP/1.1\r\nHost: x\r\n\n", "", "a line ends in LF without CR");
	BAD_CASE("GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n", "", "a CR is not followed by LF");
	BAD_CASE("\rGET / HTTP/1.1\r\n\r\n", "", "a CR is not followed by LF");
	static const char nul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
	CHECK(every_chunking(&AUTH, nul, sizeof nul - 1,
		&(struct want){EGRESS_HTTP_BAD, "", 0, NULL, "a header value holds a control byte", false}));
	BAD_CASE("GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", "", "a header value holds a control byte");
	BAD_CASE("GET / HTTP/1.1\r\nHost : x\r\n\r\n", "",
		"a header name is followed by a space before its colon");
	BAD_CASE("GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", "",
		"a header name is followed by a space before its colon");
	BAD_CASE("GET / HTTP/1.1\r\n: x\r\n\r\n", "", "a header line has no name");
	BAD_CASE("GET / HTTP/1.1\r\nHost x\r\n\r\n", "", "a header line has no colon");
	BAD_CASE("GET / HTTP/1.1\r\nHo\"st: x\r\n\r\n", "", "a header line has no colon");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", "",
		"the request has both Content-Length and Transfer-Encoding");
	BAD_CASE("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", "",
		"the request has both Content-Length and Transfer-Encoding");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "",
		"the request has differing Content-Lengths");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 3, 4\r\n\r\n", "",
		"the request has differing Content-Lengths");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n", "", "a Content-Length is not a number");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 0x3\r\n\r\n", "", "a Content-Length is not a number");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 3 4\r\n\r\n", "", "a Content-Length is not a number");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", "", "a Content-Length is empty");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 9007199254740993\r\n\r\n", "",
		"a Content-Length is over 2^53");
	BAD_CASE("POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", "",
		"a Content-Length is over 2^53");
	BAD_CASE("POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "",
		"a transfer coding follows chunked");
	BAD_CASE("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", "",
		"a transfer coding follows chunked");
	BAD_CASE("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "",
		"the request's last transfer coding is not chunked");
	BAD_CASE("POST / HTTP/1.1\r\nTransfer-Encoding: \r\n\r\n", "",
		"the request's last transfer coding is not chunked");
	BAD_CASE("POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n", "",
		"the request's last transfer coding is not chunked");
	BAD_CASE("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "",
		"an HTTP/1.0 request has a Transfer-Encoding");
	BAD_CASE("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", "", "the request has two Host headers");
	const char *line = "the request line is not METHOD target HTTP/1.x";
	BAD_CASE("GET  / HTTP/1.1\r\n\r\n", "", line);
	BAD_CASE("GET / HTTP/1.1 \r\n\r\n", "", line);
	BAD_CASE("GET / HTTP/2.0\r\n\r\n", "", line);
	BAD_CASE("GET / http/1.1\r\n\r\n", "", line);
	BAD_CASE("GET /\x01 HTTP/1.1\r\n\r\n", "", line);
	BAD_CASE("G(T / HTTP/1.1\r\n\r\n", "", line);
	BAD_CASE("GET\r\n\r\n", "", line);
	/* chunk framing: what came before the wrong byte went out */
	const char *head = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
	const char *emitted =
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer sk-test\r\n\r\n";
	struct {
		const char *body, *out, *why;
	} chunks[] = {
		{"zz\r\n", "", "a chunk-size is not hexadecimal"},
		{";x\r\n", "", "a chunk-size is not hexadecimal"},
		{"5\nhello\r\n", "5", "a chunk-size line does not end in CRLF"},
		{"5 x\r\n", "5 ", "a chunk extension is malformed"},
		{"5;a\x01\r\n", "5;a", "a chunk extension is malformed"},
		{"5\r\nhelloX\r\n", "5\r\nhello", "a chunk's data does not end in CRLF"},
		{"5\r\nhello\rX", "5\r\nhello\r", "a chunk's data does not end in CRLF"},
		{"20000000000001\r\n", "2000000000000", "a chunk is over 2^53 bytes"},
		{"0\r\n x: 1\r\n\r\n", "0\r\n", "a trailer line is folded (obs-fold)"},
		{"0\r\nX : 1\r\n\r\n", "0\r\nX",
			"a trailer name is not a token, or a space comes before its colon"},
		{"0\r\nX: \x01\r\n\r\n", "0\r\nX: ", "a trailer value holds a control byte"},
		{"0\r\nX: 1\n\r\n", "0\r\nX: 1", "a trailer value holds a control byte"},
		{"0\r\nX: 1\r\r\n", "0\r\nX: 1\r", "a trailer line does not end in CRLF"},
		{"0\r\n\rX", "0\r\n\r", "the trailers do not end in CRLF"},
		{"0\r\n:\r\n\r\n", "0\r\n", "a trailer line has no name"},
	};
	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		char in[256], out[256];
		snprintf(in, sizeof in, "%s%s", head, chunks[i].body);
		size_t len = strlen(head) + strlen(chunks[i].body);
		snprintf(out, sizeof out, "%s%s", emitted, chunks[i].out);
		if (!every_chunking(&AUTH, in, len,
			    &(struct want){EGRESS_HTTP_BAD, out, 0, NULL, chunks[i].why, false})) {
			fprintf(stderr, "  chunk case %zu\n", i);
			CHECK(false);
		}
	}
}

/* "GET / HTTP/1.1\r\n", count header lines (the last one padded) and the
 * blank line: a head of size bytes. */
static char *head_of(size_t size, size_t count)
{
	char *s = malloc(size + 1);
	size_t n = (size_t)sprintf(s, "GET / HTTP/1.1\r\n");
	for (size_t i = 0; i + 1 < count; i++)
		n += (size_t)sprintf(s + n, "X-%zu: v\r\n", i);
	n += (size_t)sprintf(s + n, "Pad: ");
	size_t pad = size - n - 4;
	memset(s + n, 'p', pad);
	memcpy(s + n + pad, "\r\n\r\n", 5);
	return s;
}

static void limits(void)
{
	static const struct rules none = {NULL, 0, NULL};
	char *s = head_of(EGRESS_HTTP_HEAD_MAX, 3);
	CHECK(every_chunking(&none, s, EGRESS_HTTP_HEAD_MAX,
		&(struct want){EGRESS_HTTP_OK, s, 0, NULL, NULL, false}));
	free(s);
	s = head_of(EGRESS_HTTP_HEAD_MAX + 1, 3);
	CHECK(every_chunking(&none, s, EGRESS_HTTP_HEAD_MAX + 1,
		&(struct want){EGRESS_HTTP_BAD, "", 0, NULL, "the request head is over 64 KiB", false}));
	free(s);
	s = head_of(4000, EGRESS_HTTP_HEADERS_MAX);
	CHECK(every_chunking(&none, s, 4000, &(struct want){EGRESS_HTTP_OK, s, 0, NULL, NULL, false}));
	free(s);
	s = head_of(4000, EGRESS_HTTP_HEADERS_MAX + 1);
	CHECK(every_chunking(&none, s, 4000,
		&(struct want){EGRESS_HTTP_BAD, "", 0, NULL, "the request has more than 100 headers",
			false}));
	free(s);
	/* trailers: 100, then 101 */
	char in[4096];
	size_t n = (size_t)sprintf(in, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
	for (int i = 0; i < EGRESS_HTTP_HEADERS_MAX; i++)
		n += (size_t)sprintf(in + n, "T%d: v\r\n", i);
	sprintf(in + n, "\r\n");
	CHECK(every_chunking(&none, in, n + 2, &(struct want){EGRESS_HTTP_OK, in, 0, NULL, NULL, false}));
	sprintf(in + n, "T: v\r\n\r\n");
	in[n + 1] = '\0';
	CHECK(every_chunking(&none, in, n + 1,
		&(struct want){EGRESS_HTTP_BAD, in, n, NULL, "the request has more than 100 trailers",
			false}));
}

static void refusals(void)
{
	/* the callback refuses: what came before went out, nothing of that head */
	static const struct rules refuse = {auth, 1, "evil.example"};
	const char *in =
		"GET /a HTTP/1.1\r\nHost: ok.example\r\n\r\nGET /b HTTP/1.1\r\nHost: evil.example\r\n\r\n";
	CHECK(every_chunking(&refuse, in, strlen(in),
		&(struct want){EGRESS_HTTP_REFUSED,
			"GET /a HTTP/1.1\r\nHost: ok.example\r\nAuthorization: Bearer sk-test\r\n\r\n", 0,
			"ok.example|evil.example|", "no rule lets this host be reached", false}));
	/* what the callback gives is checked */
	in = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
	static const struct egress_header crlf[] = {{"Authorization", "Bearer a\r\nX-Injected: 1"}};
	static const struct egress_header ctl[] = {{"X-Ok", "fine"}, {"Authorization", "a\x01"}};
	static const struct egress_header name[] = {{"Bad Name", "v"}};
	static const struct egress_header empty[] = {{"", "v"}};
	static const struct egress_header framing[] = {{"content-length", "0"}};
	static const struct egress_header te[] = {{"Transfer-Encoding", "chunked"}};
	struct {
		struct rules r;
		const char *why;
	} bad[] = {
		{{crlf, 1, NULL}, "header Authorization has a value that cannot be sent"},
		{{ctl, 2, NULL}, "header Authorization has a value that cannot be sent"},
		{{name, 1, NULL}, "a header to set has a name that is not a token"},
		{{empty, 1, NULL}, "a header to set has a name that is not a token"},
		{{framing, 1, NULL}, "header content-length cannot be set: it frames the stream"},
		{{te, 1, NULL}, "header Transfer-Encoding cannot be set: it frames the stream"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(every_chunking(&bad[i].r, in, strlen(in),
			&(struct want){EGRESS_HTTP_REFUSED, "", 0, "h|", bad[i].why, false}));
}

static void passthrough(void)
{
	/* after an upgrade's head, anything goes through as it is */
	const char ws[] =
		"GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n"
		"\x81\x05hello\0\n\r GET / HTTP/1.1\n\n";
	char out[512];
	size_t n = (size_t)sprintf(out,
		"GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\n"
		"Upgrade: websocket\r\nAuthorization: Bearer sk-test\r\n\r\n");
	size_t body = sizeof ws - 1 - (strstr(ws, "\r\n\r\n") + 4 - ws);
	memcpy(out + n, strstr(ws, "\r\n\r\n") + 4, body);
	CHECK(every_chunking(&AUTH, ws, sizeof ws - 1,
		&(struct want){EGRESS_HTTP_OK, out, n + body, "h|", NULL, true}));
	const char *connect = "CONNECT db.example:5432 HTTP/1.1\r\nHost: db.example:5432\r\n\r\n\x16\x03\x01";
	CHECK(every_chunking(&AUTH, connect, strlen(connect),
		&(struct want){EGRESS_HTTP_OK,
			"CONNECT db.example:5432 HTTP/1.1\r\nHost: db.example:5432\r\nAuthorization: Bearer sk-test\r\n\r\n\x16\x03\x01",
			0, "db.example:5432|", NULL, true}));
	/* Upgrade without Connection: upgrade is no upgrade: what follows is a request */
	BAD_CASE("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x81\x05 x\r\n\r\n",
		"GET / HTTP/1.1\r\nUpgrade: websocket\r\n"
		"Authorization: Bearer sk-test\r\n\r\n",
		"the request line is not METHOD target HTTP/1.x");
}

void suite_egress_http(void)
{
	requests();
	smuggling();
	limits();
	refusals();
	passthrough();
}
