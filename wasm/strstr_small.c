/* strstr_small.c — linked only into core.wasm, in place of musl's two-way
 * strstr (1.4 KiB): the core looks for short needles ("://", a few words of
 * an error text) in short strings, where the plain scan is as good. */
#include <stdint.h>
#include <string.h>

#include "libc_small.h"

char *LIBC_SMALL(strstr)(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);
	for (;; haystack++) {
		if (!strncmp(haystack, needle, n))
			return (char *)(uintptr_t)haystack; /* C's signature drops the const */
		if (!*haystack)
			return NULL;
	}
}
