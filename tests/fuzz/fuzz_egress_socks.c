/* libFuzzer target: the egress proxy's SOCKS5 client
 * (backend/egress/egress_socks.c), which reads what a proxy the user names
 * answers. The first input byte picks the chunk size and whether to
 * authenticate and connect by name; the rest is the proxy's answers. Any
 * bytes: no crash, no read past them, every status one of the four, what it
 * consumes never more than it is given, a message to send never larger than
 * its buffer, and no credential left in memory or in a reason once it ends. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress_socks.h"
#include "lib/err.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t chunk = 1 + (data[0] & 0x1f);
	int authed = data[0] & 0x20, by_name = data[0] & 0x40;
	data++;
	size--;
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	struct egress_socks s;
	struct err why;
	err_clear(&why);
	enum egress_socks_status st = egress_socks_start(&s, authed ? "user" : NULL,
		authed ? "pa55word" : NULL, by_name ? "api.world.test" : NULL, 0x7f000001u, 80, &why);
	size_t at = 0;
	while ((st == EGRESS_SOCKS_SEND || st == EGRESS_SOCKS_MORE) && at < size) {
		if (st == EGRESS_SOCKS_SEND)
			REQUIRE(s.out_len > 0 && s.out_len <= sizeof s.out, "out_len %zu", s.out_len);
		size_t n = size - at < chunk ? size - at : chunk, used = 0;
		st = egress_socks_feed(&s, copy + at, n, &used, &why);
		REQUIRE(used <= n, "used %zu of %zu", used, n);
		REQUIRE(st == EGRESS_SOCKS_SEND || st == EGRESS_SOCKS_MORE || st == EGRESS_SOCKS_OPEN ||
				st == EGRESS_SOCKS_FAILED,
			"status %d", st);
		at += used;
	}
	if (st == EGRESS_SOCKS_OPEN || st == EGRESS_SOCKS_FAILED) {
		/* (the proxy's own bytes in s.in may hold anything, these very letters too) */
		REQUIRE(!s.user[0] && !s.pass[0] && !memmem(s.out, sizeof s.out, "pa55word", 8),
			"the credentials outlived the handshake");
		REQUIRE(st == EGRESS_SOCKS_OPEN || why.msg[0], "a failure without a reason");
		REQUIRE(!strstr(why.msg, "pa55word"), "the password in a reason");
	}
	free(copy);
	return 0;
}
