/* egress/egress_socks.c: SOCKS5 handshakes as a proxy answers them (no
 * authentication, username and password, CONNECT by address and by name,
 * replies with every address type), fed at every chunking; every refusal
 * with its reason, and the credentials never in a reason nor left behind. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "egress/egress_socks.h"
#include "lib/err.h"
#include "suites.h"

/* Runs a handshake against answers (each a whole answer of one step) fed in
 * pieces of chunk bytes, the destination's first bytes after the last one.
 * Returns the final status (FAILED with why); sent collects every message
 * sent. */
static enum egress_socks_status run(struct egress_socks *s, const char *user, const char *pass,
	const char *name, const unsigned char *answers, size_t len, size_t chunk, unsigned char *sent,
	size_t *sent_len, size_t *rest, struct err *why)
{
	err_clear(why);
	enum egress_socks_status st = egress_socks_start(s, user, pass, name, 0xcb00710au, 443, why);
	*sent_len = 0;
	size_t at = 0;
	while (st == EGRESS_SOCKS_SEND || st == EGRESS_SOCKS_MORE) {
		if (st == EGRESS_SOCKS_SEND) {
			memcpy(sent + *sent_len, s->out, s->out_len);
			*sent_len += s->out_len;
		}
		if (at >= len)
			return EGRESS_SOCKS_MORE;
		size_t n = len - at < chunk ? len - at : chunk, used = 0;
		st = egress_socks_feed(s, answers + at, n, &used, why);
		CHECK(used <= n);
		at += used;
		if (st == EGRESS_SOCKS_MORE)
			CHECK(used == n);
	}
	*rest = len - at;
	return st;
}

void suite_egress_socks(void)
{
	struct egress_socks s;
	struct err why;
	unsigned char sent[1024];
	size_t sent_len, rest;
	/* No authentication, CONNECT to an address; the reply binds an IPv4
	 * address; two bytes of the destination's come after it. */
	const unsigned char plain[] = {5, 0, 5, 0, 0, 1, 10, 0, 0, 1, 0x1f, 0x90, 'h', 'i'};
	for (size_t chunk = 1; chunk <= sizeof plain; chunk++) {
		CHECK(run(&s, NULL, NULL, NULL, plain, sizeof plain, chunk, sent, &sent_len, &rest, &why) ==
			EGRESS_SOCKS_OPEN);
		CHECK_NUM(rest, 2);
		const unsigned char want[] = {5, 1, 0, 5, 1, 0, 1, 203, 0, 113, 10, 1, 0xbb};
		CHECK(sent_len == sizeof want && memcmp(sent, want, sizeof want) == 0);
	}
	/* Username and password, CONNECT by name; a reply binding a name, then one binding IPv6. */
	const unsigned char authed[] = {5, 2, 1, 0, 5, 0, 0, 3, 3, 'a', '.', 'b', 0, 80};
	for (size_t chunk = 1; chunk <= sizeof authed; chunk++) {
		CHECK(run(&s, "me", "s3cret", "api.world.test", authed, sizeof authed, chunk, sent, &sent_len,
			      &rest, &why) == EGRESS_SOCKS_OPEN);
		CHECK_NUM(rest, 0);
		const unsigned char want[] = {5, 1, 2, 1, 2, 'm', 'e', 6, 's', '3', 'c', 'r', 'e', 't', 5, 1,
			0, 3, 14, 'a', 'p', 'i', '.', 'w', 'o', 'r', 'l', 'd', '.', 't', 'e', 's', 't', 1,
			0xbb};
		CHECK(sent_len == sizeof want && memcmp(sent, want, sizeof want) == 0);
		CHECK(!memmem(&s, sizeof s, "s3cret", 6)); /* wiped once used */
	}
	unsigned char v6[4 + 16 + 2 + 2] = {5, 0, 5, 0, 0, 4};
	CHECK(run(&s, NULL, NULL, NULL, v6, sizeof v6, 3, sent, &sent_len, &rest, &why) == EGRESS_SOCKS_OPEN);

	/* Refusals, each with its reason and no credential in it. */
	struct {
		const unsigned char *a;
		size_t n;
		const char *user;
		const char *why;
	} bad[] = {
		{(const unsigned char *)"\x04\x00", 2, NULL, "does not speak SOCKS5"},
		{(const unsigned char *)"\x05\xff", 2, NULL, "wants a username and password"},
		{(const unsigned char *)"\x05\xff", 2, "me", "accepts no username and password"},
		{(const unsigned char *)"\x05\x02", 2, NULL, "a method that was not offered"},
		{(const unsigned char *)"\x05\x00", 2, "me", "a method that was not offered"},
		{(const unsigned char *)"\x05\x02\x01\x01", 4, "me", "refused the username and password"},
		{(const unsigned char *)"\x05\x00\x05\x05\x00\x01\0\0\0\0\0\0", 12, NULL,
			"could not connect: connection refused"},
		{(const unsigned char *)"\x05\x00\x05\x02\x00\x01\0\0\0\0\0\0", 12, NULL,
			"not allowed by ruleset"},
		{(const unsigned char *)"\x05\x00\x05\x00\x00\x07", 6, NULL, "reply is not SOCKS5"},
		{(const unsigned char *)"\x05\x00\x04\x00\x00\x01\0\0\0\0\0\0", 12, NULL,
			"reply is not SOCKS5"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(run(&s, bad[i].user, bad[i].user ? "s3cret" : NULL, NULL, bad[i].a, bad[i].n, 1, sent,
			      &sent_len, &rest, &why) == EGRESS_SOCKS_FAILED);
		CHECK(strstr(why.msg, bad[i].why) != NULL);
		CHECK(!strstr(why.msg, "s3cret") && !memmem(&s, sizeof s, "s3cret", 6));
	}
	/* Fields over 255 bytes are refused before anything is sent. */
	char long_name[300];
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	err_clear(&why);
	CHECK(egress_socks_start(&s, NULL, NULL, long_name, 0, 443, &why) == EGRESS_SOCKS_FAILED);
	CHECK(strstr(why.msg, "over 255 bytes") != NULL);
	CHECK(egress_socks_start(&s, "", "x", NULL, 1, 443, &why) == EGRESS_SOCKS_FAILED);
	/* Feeding after the end fails; it never reads past what it is given. */
	size_t used;
	CHECK(egress_socks_feed(&s, (const unsigned char *)"\x05", 1, &used, &why) == EGRESS_SOCKS_FAILED);
	CHECK(strstr(why.msg, "handshake is over") != NULL);
}
