/* libFuzzer target: wasm/printf_small.c (core.wasm's snprintf, natively
 * small_snprintf) against glibc's. The input is a value (8 bytes: the bits
 * of a double, or an integer), then bytes choosing the conversion, length,
 * flags, width, precision and buffer size; both must return the same and
 * write the same bytes, and nothing past the size. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libc_small.h"

#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* formats made from the input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The value as the argument the conversion reads. */
static int format(int small, char *out, size_t cap, const char *fmt, char conv, int len, uint64_t v)
{
	int (*f)(char *, size_t, const char *, ...) = small ? small_snprintf : snprintf;
	int is_signed = conv == 'd' || conv == 'i';
	if (strchr("eEfFgG", conv)) {
		double x;
		memcpy(&x, &v, sizeof x);
		return f(out, cap, fmt, x);
	}
	if (len == 4 || len == 5)
		return is_signed ? f(out, cap, fmt, (long long)v)
				 : f(out, cap, fmt, (unsigned long long)v); /* ll j */
	if (len == 3)
		return is_signed ? f(out, cap, fmt, (long)v) : f(out, cap, fmt, (unsigned long)v);
	if (len >= 6)
		return is_signed ? f(out, cap, fmt, (ptrdiff_t)v) : f(out, cap, fmt, (size_t)v); /* z t */
	return is_signed ? f(out, cap, fmt, (int)v) : f(out, cap, fmt, (unsigned)v);
}

static void check(const char *want_fmt, const char *got_fmt, size_t cap, char conv, int len, uint64_t v)
{
	char want[1024], got[1024];
	memset(want, 0x5a, sizeof want);
	memset(got, 0x5a, sizeof got);
	int want_n = format(0, want, cap, want_fmt, conv, len, v);
	int got_n = format(1, got, cap, got_fmt, conv, len, v);
	if (want_n != got_n || memcmp(want, got, sizeof want) != 0) {
		fprintf(stderr,
			"printf differs: \"%s\" (glibc \"%s\") size %zu value %#llx\n  glibc %d \"%.200s\"\n  small %d \"%.200s\"\n",
			got_fmt, want_fmt, cap, (unsigned long long)v, want_n, cap ? want : "", got_n,
			cap ? got : "");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 14)
		return 0;
	uint64_t v;
	memcpy(&v, data, sizeof v);
	uint8_t pick = data[8], flag_bits = data[9], width = data[10], prec = data[11], cut = data[12],
		lenpick = data[13];
	static const char convs[] = "eEfFgGdiuoxX";
	static const char *const lengths[] = {"hh", "h", "", "l", "ll", "j", "z", "t"};
	char conv = convs[pick % 12], spec[32], got_fmt[64], want_fmt[64];
	int len = pick % 12 < 6 ? 2 : lenpick % 8;
	snprintf(spec, sizeof spec, "%s%s%s%s%s", flag_bits & 1 ? "-" : "", flag_bits & 2 ? "+" : "",
		flag_bits & 4 ? " " : "", flag_bits & 8 ? "#" : "", flag_bits & 16 ? "0" : "");
	if (width & 1)
		snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%d", width >> 3);
	int P = prec & 1 ? (prec >> 1) % 90 : -1; /* -1: none */
	char precision[8] = "";
	if (P >= 0)
		snprintf(precision, sizeof precision, ".%d", P);
	snprintf(got_fmt, sizeof got_fmt, "[%%%s%s%s%c]", spec, precision, lengths[len], conv);
	memcpy(want_fmt, got_fmt, sizeof want_fmt);

	/* glibc drops the zeros '#' keeps when %#g rounds up to a new power of
   * ten: compare with %#e or %#f as C defines %#g instead. */
	if ((flag_bits & 8) && (conv | 32) == 'g') {
		double x;
		memcpy(&x, &v, sizeof x);
		int p = P < 0 ? 6 : P ? P : 1;
		char e_form[128];
		snprintf(e_form, sizeof e_form, "%.*e", p - 1, x);
		const char *e = strchr(e_form, 'e');
		int X = e ? atoi(e + 1) : 0;
		if (p > X && X >= -4)
			snprintf(want_fmt, sizeof want_fmt, "[%%%s.%d%c]", spec, p - 1 - X,
				conv == 'G' ? 'F' : 'f');
		else
			snprintf(want_fmt, sizeof want_fmt, "[%%%s.%d%c]", spec, p - 1,
				conv == 'G' ? 'E' : 'e');
	}
	check(want_fmt, got_fmt, 1024, conv, len, v);
	check(want_fmt, got_fmt, cut % 64, conv, len, v);
	return 0;
}
