/* libFuzzer target: wasm/numbers_small.c (core.wasm's strtod, natively
 * small_strtod) against glibc's, on any text of up to 19 significant digits
 * (beyond them it truncates, by design): the same bits and the same end.
 * Hexadecimal, inf and nan are left out: it refuses them on purpose. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libc_small.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Significant digits of the number text starts with (leading zeros aside). */
static int significant_digits(const char *p)
{
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		p++;
	int n = 0;
	for (; (*p >= '0' && *p <= '9') || *p == '.'; p++)
		n += *p != '.' && (n || *p != '0');
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[80];
	if (size >= sizeof text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (strpbrk(text, "xXiInNpP") || significant_digits(text) > 19)
		return 0;
	char *want_end, *got_end;
	double want = strtod(text, &want_end), got = small_strtod(text, &got_end);
	if (memcmp(&want, &got, sizeof want) != 0 || want_end != got_end) {
		fprintf(stderr, "strtod differs on \"%s\": glibc %a (end +%td), small %a (end +%td)\n", text,
			want, want_end - text, got, got_end - text);
		abort();
	}
	return 0;
}
