/* libFuzzer target: the egress proxy's ClientHello reader
 * (backend/egress/egress_sni.c), which reads the first bytes every
 * intercepted TLS connection of a sandbox sends. The first input byte picks
 * a prefix length and the name's capacity; the rest is what a client sent.
 * Any bytes: no crash, no read past them; a name found is lower-case
 * [a-z0-9.-] without an empty label and fits its capacity; a prefix's
 * verdict, once it is not MORE, is the whole input's (the same name), and
 * MORE for the whole means MORE for every prefix; a smaller capacity than
 * the name needs gives NOT_TLS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress_sni.h"

#include "fuzz_host_name.h"
#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t pick = data[0];
	data++;
	size--;

	char whole[256], part[256], small[256];
	enum egress_sni_result r = egress_sni_parse(data, size, whole, sizeof whole);
	if (r == EGRESS_SNI_FOUND)
		require_host_name(whole, sizeof whole);

	size_t prefix = size ? (pick * 7919) % (size + 1) : 0;
	enum egress_sni_result p = egress_sni_parse(data, prefix, part, sizeof part);
	if (p != EGRESS_SNI_MORE) {
		REQUIRE(p == r, "a prefix of %zu says %d, all %zu bytes %d", prefix, p, size, r);
		if (p == EGRESS_SNI_FOUND)
			REQUIRE(strcmp(part, whole) == 0, "%s at %zu, %s at %zu", part, prefix, whole, size);
	}
	if (r == EGRESS_SNI_MORE)
		REQUIRE(p == EGRESS_SNI_MORE, "MORE for all, %d for a prefix", p);

	size_t cap = pick % 64 + 1;
	enum egress_sni_result c = egress_sni_parse(data, size, small, cap);
	if (r == EGRESS_SNI_FOUND) {
		if (strlen(whole) < cap)
			REQUIRE(c == EGRESS_SNI_FOUND && strcmp(small, whole) == 0, "cap %zu lost %s", cap,
				whole);
		else
			REQUIRE(c == EGRESS_SNI_NOT_TLS, "%s in a capacity of %zu: %d", whole, cap, c);
	} else {
		REQUIRE(c == r, "cap %zu changed %d to %d", cap, r, c);
	}
	return 0;
}
