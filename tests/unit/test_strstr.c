/* test_strstr.c — wasm/strstr_small.c (core.wasm's strstr) against glibc's:
 * the core's own needles, then every haystack and needle over a 3-letter
 * alphabet up to lengths 9 and 4, empty ones included. */
#include <string.h>

#include "check.h"
#include "libc_small.h"
#include "suites.h"

/* The i-th string over "abc" of length len (i < 3^len). */
static void nth_string(char *out, unsigned i, int len)
{
	for (int k = 0; k < len; k++, i /= 3)
		out[k] = (char)('a' + i % 3);
	out[len] = '\0';
}

void suite_strstr(void)
{
	const char *texts[] = {"https://api.e2b.app", "http://x", "no scheme", "://", "",
		"chmod: invalid user: 'x'", "chown: invalid group: 'g'", "invalid spec"};
	const char *needles[] = {"://", "invalid user", "invalid group", "invalid spec", ""};
	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++)
		for (size_t n = 0; n < sizeof needles / sizeof needles[0]; n++)
			CHECK(small_strstr(texts[t], needles[n]) == strstr(texts[t], needles[n]));

	long differ = 0, pow3[10] = {1};
	for (int k = 1; k < 10; k++)
		pow3[k] = pow3[k - 1] * 3;
	char hay[10], needle[5];
	for (int hl = 0; hl <= 9; hl++)
		for (long h = 0; h < pow3[hl]; h++) {
			nth_string(hay, (unsigned)h, hl);
			for (int nl = 0; nl <= 4; nl++)
				for (long n = 0; n < pow3[nl]; n++) {
					nth_string(needle, (unsigned)n, nl);
					differ += small_strstr(hay, needle) != strstr(hay, needle);
				}
		}
	CHECK(differ == 0);
}
