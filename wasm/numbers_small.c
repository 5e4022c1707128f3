/* numbers_small.c — linked only into core.wasm (Emscripten), in place of
 * musl's strtod and sscanf, whose arbitrary-precision scanner (__floatscan)
 * and format engine were 10 KiB of the module. The core parses decimal
 * numbers only: JSON numbers in EPP
 * messages and E2B answers (ids, seconds, ports, sizes, offsets) and the
 * seconds of an option or a Retry-After header.
 *
 * Correctly rounded for up to 19 significant digits: Clinger's fast path (the
 * digits fit a double and |exponent| <= 22: one correctly rounded IEEE
 * operation), else a double within a few units in the last place, moved one
 * unit at a time until the exact value lies between the halfway points to its
 * neighbours, compared exactly in integers (bignum_small.c); ties go to even.
 * No long double, so no binary128 soft-float. Beyond 19 digits the rest are
 * dropped (truncation, < 1e-18 relative). Syntax: C-locale strtod for decimal
 * numbers — leading space, sign, digits, fraction, exponent. "inf", "nan"
 * and hexadecimal are not JSON numbers and are not converted (*end = s), so
 * option values like "0x10" are refused rather than guessed. Natively these
 * are small_strtod and small_sscanf (libc_small.h), compared with glibc's by
 * the unit tests. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bignum_small.h"
#include "libc_small.h"

static const double exact_powers[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

#define LIMBS 48 /* digits·10^308·2^55 and digits·2^1076 < 10^344; m·10^342 < 10^359 */

/* The sign of digits·10^exp10 - m·2^p, computed exactly. */
static int compare_exact(uint64_t digits, int exp10, uint64_t m, int p)
{
	uint32_t a[LIMBS], b[LIMBS];
	int na = bignum_set(a, digits), nb = bignum_set(b, m);
	if (exp10 > 0)
		na = bignum_mul_pow(a, na, 10, exp10);
	else
		nb = bignum_mul_pow(b, nb, 10, -exp10);
	if (p > 0)
		nb = bignum_mul_pow(b, nb, 2, p);
	else
		na = bignum_mul_pow(a, na, 2, -p);
	return bignum_compare(a, na, b, nb);
}

/* digits·10^exp10 (digits > 0) correctly rounded, half to even. */
static double nearest(uint64_t digits, int exp10)
{
	const uint64_t hidden = 1ull << 52, inf = 0x7ffull << 52;
	if (exp10 < -342)
		return 0; /* < 10^-323: below half the least subnormal */
	if (exp10 > 308)
		return HUGE_VAL;
	double z = (double)digits; /* first a close guess, in doubles */
	for (int n = exp10; n > 0; n -= 22)
		z *= exact_powers[n < 22 ? n : 22];
	for (int n = -exp10; n > 0; n -= 22)
		z /= exact_powers[n < 22 ? n : 22];
	uint64_t b;
	memcpy(&b, &z, sizeof b);
	if (b >= inf)
		b = inf - 1; /* the largest double */
	for (;;) {           /* z = m·2^e; its neighbours' halfway points are (2m±1)·2^(e-1) */
		uint64_t m = b & (hidden - 1);
		int e = (int)(b >> 52);
		if (e)
			m |= hidden;
		else
			e = 1;
		e -= 1075;
		int c = compare_exact(digits, exp10, 2 * m + 1, e - 1);
		if (c > 0 || (c == 0 && (m & 1))) {
			if (++b == inf)
				break;
			continue;
		}
		if (b == 0)
			break;
		/* below a power of two the gap is half as wide */
		c = m == hidden && e > -1074 ? compare_exact(digits, exp10, 4 * m - 1, e - 2)
					     : compare_exact(digits, exp10, 2 * m - 1, e - 1);
		if (c < 0 || (c == 0 && (m & 1))) {
			b--;
			continue;
		}
		break;
	}
	memcpy(&z, &b, sizeof z);
	return z;
}

/* The general case of strtod below; apart so that numbers that take the
 * short way never run (and in core.wasm never compile) it. */
__attribute__((noinline)) static double strtod_general(const char *s, char **end)
{
	const char *p = s;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	int negative = 0;
	if (*p == '+' || *p == '-')
		negative = *p++ == '-';

	uint64_t digits = 0; /* the first 19 significant digits */
	int kept = 0, exp10 = 0, seen = 0;
	for (; is_digit(*p); p++, seen = 1) {
		if (kept < 19) {
			digits = digits * 10 + (uint64_t)(*p - '0');
			kept += digits != 0;
		} else {
			exp10++; /* a dropped integer digit still scales */
		}
	}
	if (*p == '.' && (seen || is_digit(p[1]))) {
		for (p++; is_digit(*p); p++, seen = 1) {
			if (kept < 19) {
				digits = digits * 10 + (uint64_t)(*p - '0');
				kept += digits != 0;
				exp10--;
			}
		}
	}
	if (!seen) {
		if (end)
			*end = (char *)(uintptr_t)s; /* C's signature drops the const */
		return 0;
	}
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		int eneg = 0;
		if (*q == '+' || *q == '-')
			eneg = *q++ == '-';
		if (is_digit(*q)) {
			int e = 0;
			for (; is_digit(*q); q++)
				if (e < 100000)
					e = e * 10 + (*q - '0');
			exp10 += eneg ? -e : e;
			p = q;
		}
	}
	if (end)
		*end = (char *)(uintptr_t)p;

	double value;
	if (digits == 0) {
		value = 0;
	} else if (digits <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
		value = exp10 < 0 ? (double)digits / exact_powers[-exp10]
				  : (double)digits * exact_powers[exp10];
	} else {
		value = nearest(digits, exp10);
		if (value == 0 || isinf(value))
			errno = ERANGE;
	}
	return negative ? -value : value;
}

/* What cJSON hands over for ids, sizes and counts, [-]digits with at
 * most 15 of them and no fraction or exponent after, is exact as a double:
 * read here. Anything else takes the general way. */
double LIBC_SMALL(strtod)(const char *s, char **end)
{
	const char *p = s + (*s == '-');
	uint64_t v = 0;
	int n = 0;
	for (; n < 16 && is_digit(*p); n++)
		v = v * 10 + (uint64_t)(*p++ - '0');
	if (n == 0 || n > 15 || is_digit(*p) || *p == '.' || *p == 'e' || *p == 'E')
		return strtod_general(s, end);
	if (end)
		*end = (char *)(uintptr_t)p;
	return *s == '-' ? -(double)v : (double)v;
}

/* The core's one sscanf: cJSON reading back a number it printed ("%lg") to
 * see whether 15 digits were enough. Any other format is a new use that this
 * file must learn first: it traps rather than scan wrongly. */
int LIBC_SMALL(sscanf)(const char *restrict text, const char *restrict format, ...)
{
	if (strcmp(format, "%lg") != 0)
		__builtin_trap();
	char *end;
	double value = LIBC_SMALL(strtod)(text, &end);
	if (end == text)
		return *text ? 0 : EOF;
	va_list ap;
	va_start(ap, format);
	*va_arg(ap, double *) = value;
	va_end(ap);
	return 1;
}
