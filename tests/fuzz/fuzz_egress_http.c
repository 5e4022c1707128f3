/* libFuzzer target: the egress proxy's request rewriter
 * (backend/egress/egress_http.c, egress_http_head.c), which reads every
 * byte a sandbox sends through a transform rule. The first input byte picks
 * the headers to set and a Host to refuse, the second seeds the piece
 * sizes; the rest is what a client sent. Any bytes: no crash, no leak; fed
 * in random pieces the verdict, the bytes emitted, the Host values asked
 * about and pass-through are those of feeding it at once; and what was
 * emitted, rewritten again with the same rules, passes unchanged (every
 * head emitted is one the rewriter itself accepts, with its headers set
 * once). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress_http.h"
#include "lib/err.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	unsigned rules;
	uint8_t *out;
	size_t len, cap;
	char hosts[4096];
	size_t hosts_len;
};

static const struct egress_header set_both[] = {{"Authorization", "Bearer fuzz"}, {"x-two", "2"}};

static void emit_cb(void *ctx, const void *bytes, size_t len)
{
	struct seen *s = ctx;
	if (s->len + len > s->cap) {
		s->cap = (s->len + len) * 2;
		s->out = realloc(s->out, s->cap);
		REQUIRE(s->out, "out of memory");
	}
	memcpy(s->out + s->len, bytes, len);
	s->len += len;
}

static int headers_cb(void *ctx, const char *host, const struct egress_header **headers, size_t *n,
	struct err *err)
{
	struct seen *s = ctx;
	int w = snprintf(s->hosts + s->hosts_len, sizeof s->hosts - s->hosts_len, "%s|",
		host ? host : "(none)");
	if (w > 0)
		s->hosts_len = s->hosts_len + (size_t)w < sizeof s->hosts ? s->hosts_len + (size_t)w
									  : sizeof s->hosts - 1;
	if ((s->rules & 4) && host && strcmp(host, "r") == 0) {
		return err_set(err, 0, "refused");
	}
	*headers = (s->rules & 3) == 0 ? NULL : (s->rules & 3) == 1 ? set_both : set_both + 1;
	*n = (s->rules & 3) == 0 ? 0 : (s->rules & 3) == 1 ? 2 : 1;
	return 0;
}

struct outcome {
	enum egress_http_status st;
	struct err why;
	bool pass;
	struct seen seen;
};

/* Feeds data in pieces from the seed (0: at once). */
static void feed(const uint8_t *data, size_t size, unsigned rules, unsigned seed, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	o->seen.rules = rules;
	struct egress_http *h = egress_http_new(headers_cb, emit_cb, &o->seen);
	REQUIRE(h, "out of memory");
	uint32_t x = seed * 2654435761u + 1;
	size_t at = 0;
	err_clear(&o->why);
	do {
		size_t n = size - at;
		if (seed) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			n = x % 64 < n ? x % 64 : n;
		}
		o->st = egress_http_feed(h, n ? data + at : data, n, &o->why);
		REQUIRE((o->st == EGRESS_HTTP_OK) == (o->why.msg[0] == '\0'), "status %d with why %s", o->st,
			o->why.msg);
		at += n;
	} while (at < size);
	o->pass = egress_http_passthrough(h);
	egress_http_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned rules = data[0], seed = data[1] | 1u;
	data += 2;
	size -= 2;

	struct outcome whole, pieces, again;
	feed(data, size, rules, 0, &whole);
	feed(data, size, rules, seed, &pieces);
	REQUIRE(whole.st == pieces.st && whole.pass == pieces.pass, "verdict %d/%d by pieces, %d/%d at once",
		pieces.st, pieces.pass, whole.st, whole.pass);
	REQUIRE(whole.seen.len == pieces.seen.len &&
			(whole.seen.len == 0 || memcmp(whole.seen.out, pieces.seen.out, whole.seen.len) == 0),
		"%zu bytes out by pieces, %zu at once", pieces.seen.len, whole.seen.len);
	REQUIRE(strcmp(whole.seen.hosts, pieces.seen.hosts) == 0, "hosts %s by pieces, %s at once",
		pieces.seen.hosts, whole.seen.hosts);

	feed(whole.seen.out, whole.seen.len, rules, 0, &again);
	if (again.st == EGRESS_HTTP_BAD &&
		(strstr(again.why.msg, "more than 100 headers") || strstr(again.why.msg, "over 64 KiB"))) {
		/* the set headers took a head just over a limit: sent, but not again */
		free(whole.seen.out);
		free(pieces.seen.out);
		free(again.seen.out);
		return 0;
	}
	REQUIRE(again.st == EGRESS_HTTP_OK, "what was emitted is refused again (%d: %s)", again.st,
		again.why.msg);
	REQUIRE(again.seen.len == whole.seen.len &&
			(again.seen.len == 0 || memcmp(again.seen.out, whole.seen.out, again.seen.len) == 0),
		"rewriting what was emitted changed it (%zu bytes, then %zu)", whole.seen.len,
		again.seen.len);
	REQUIRE(again.pass == whole.pass, "pass-through differs when rewritten again");
	free(whole.seen.out);
	free(pieces.seen.out);
	free(again.seen.out);
	return 0;
}
