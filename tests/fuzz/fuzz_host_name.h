/* fuzz_host_name.h — what the egress proxy's name readers (SNI, Host)
 * promise of a name they found: it fits its capacity, is lower-case
 * [a-z0-9.-] and has no empty label. */
#ifndef E2BW_FUZZ_HOST_NAME_H
#define E2BW_FUZZ_HOST_NAME_H

#include <string.h>

#include "fuzz_require.h"

static inline void require_host_name(const char *name, size_t cap)
{
	size_t n = strnlen(name, cap);
	REQUIRE(n > 0 && n < cap, "a name of %zu bytes in %zu", n, cap);
	REQUIRE(name[0] != '.' && name[n - 1] != '.' && !strstr(name, ".."), "an empty label in %s", name);
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		REQUIRE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.',
			"byte %02x in a name", (unsigned char)c);
	}
}

#endif
