/* libFuzzer target: the egress proxy's Host reader
 * (backend/egress/egress_host.c), which reads the first bytes of every
 * port-80 connection a sandbox with allowOut domains makes. The first input
 * byte picks a prefix length and the name's capacity; the rest is what a
 * client sent. Any bytes: no crash, no read past them; a name found is
 * lower-case [a-z0-9.-] without an empty label and fits its capacity; a
 * prefix's verdict, once it is not MORE, is the whole input's (the same
 * name), and MORE for the whole means MORE for every prefix. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress_host.h"

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
	/* An exact-size copy: ASan sees any read past the end. */
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);

	char whole[256], part[256];
	enum egress_host_result r = egress_host_parse(copy, size, whole, sizeof whole);
	if (r == EGRESS_HOST_FOUND)
		require_host_name(whole, sizeof whole);

	size_t cut = size ? (pick * size) / 255 : 0;
	enum egress_host_result p = egress_host_parse(copy, cut, part, sizeof part);
	if (p != EGRESS_HOST_MORE) {
		REQUIRE(p == r, "prefix %zu says %d, the whole %d", cut, p, r);
		if (p == EGRESS_HOST_FOUND)
			REQUIRE(strcmp(part, whole) == 0, "prefix name %s, whole %s", part, whole);
	}
	if (r == EGRESS_HOST_MORE)
		REQUIRE(p == EGRESS_HOST_MORE, "whole MORE, prefix %d", p);

	size_t cap = 1 + pick % 32;
	char small[33];
	if (egress_host_parse(copy, size, small, cap) == EGRESS_HOST_FOUND)
		require_host_name(small, cap);
	free(copy);
	return 0;
}
