/* test_strtod.c — wasm/numbers_small.c (core.wasm's strtod and sscanf, built
 * here as small_strtod) against glibc's, for what it promises: up to 19
 * significant digits correctly rounded, ties to even, and the same end
 * pointer. Random doubles printed with 1 to 19 digits, random digit strings
 * at every exponent, 19-digit decimals between neighbouring doubles (below
 * every power of two too), exact ties between doubles (integers and
 * fractions), integers of every length up to 17 digits (the short way ends at
 * 15), the edges of the range, and the syntax. E2BW_STRTOD_DOUBLES sets how many
 * random doubles (default 200,000; 20,000 under ASan). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xorshift.h"
#include "libc_small.h"
#include "suites.h"

#if defined(__SANITIZE_ADDRESS__)
#define RANDOM_DOUBLES 20000
#else
#define RANDOM_DOUBLES 200000
#endif

static long compared, mismatched;
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

/* The same bits and the same end as glibc's strtod. */
static void compare(const char *text)
{
	char *want_end, *got_end;
	double want = strtod(text, &want_end), got = small_strtod(text, &got_end);
	compared++;
	if (memcmp(&want, &got, sizeof want) == 0 && want_end == got_end)
		return;
	if (mismatched++ < 12)
		fprintf(stderr, "  FAIL strtod \"%s\": glibc %a (end +%td), small %a (end +%td)\n", text,
			want, want_end - text, got, got_end - text);
}

/* 19-digit decimals between x and the next double up: around the halfway
 * point, at a resolution of about 1/1000 of a unit in the last place. */
static void between(double x, int count)
{
	char lo[40], hi[40], text[48];
	snprintf(lo, sizeof lo, "%.18e", x);
	snprintf(hi, sizeof hi, "%.18e", nextafter(x, INFINITY));
	char *lo_e = strchr(lo, 'e'), *hi_e = strchr(hi, 'e');
	if (!lo_e || !hi_e || strcmp(lo_e, hi_e) != 0)
		return; /* across a power of ten */
	int exp10 = atoi(lo_e + 1) - 18;
	*lo_e = *hi_e = '\0';
	memmove(lo + 1, lo + 2, strlen(lo + 1)); /* "d.ddd" -> "dddd" */
	memmove(hi + 1, hi + 2, strlen(hi + 1));
	unsigned long long a = strtoull(lo, NULL, 10), b = strtoull(hi, NULL, 10);
	for (int i = 0; i < count; i++) {
		unsigned long long r = i == 0 ? a + (b - a) / 2
			: i == 1              ? a + (b - a) / 2 + 1
					      : a + rng() % (b - a + 1);
		snprintf(text, sizeof text, "%llue%d", r, exp10);
		compare(text);
	}
}

static void random_doubles(long n)
{
	char text[64];
	for (long i = 0; i < n; i++) {
		uint64_t bits = rng() & ~(1ull << 63);
		double x;
		memcpy(&x, &bits, sizeof x);
		if (!isfinite(x))
			continue;
		snprintf(text, sizeof text, "%.17g", x);
		compare(text);
		snprintf(text, sizeof text, "%.*e", (int)(rng() % 19), x); /* 1 to 19 significant digits */
		compare(text);
		snprintf(text, sizeof text, "-%.16g", x);
		compare(text);
		/* a random digit string at any exponent, the point anywhere */
		int digits = 1 + (int)(rng() % 19), point = (int)(rng() % (digits + 1)), at = 0;
		for (int d = 0; d < digits; d++) {
			if (d == point)
				text[at++] = '.';
			text[at++] = (char)('0' + (d == 0 ? 1 + rng() % 9 : rng() % 10));
		}
		snprintf(text + at, sizeof text - (size_t)at, "e%d", (int)(rng() % 700) - 360);
		compare(text);
		between(x, 2);
	}
}

/* Halfway between two doubles, written exactly in 19 digits or fewer:
 * integers above 2^53, and (2m+1)·2^-j for j = 1..3 just below 2^53. */
static void ties(void)
{
	char text[64];
	for (int i = 0; i < 20000; i++) {
		int k = 1 + (int)(rng() % 10); /* ulp 2^k: doubles in [2^(52+k), 2^(53+k)) */
		uint64_t n = ((1ull << (52 + k)) | (rng() & ((1ull << (52 + k)) - 1))) & ~((1ull << k) - 1);
		uint64_t tie = n + (1ull << (k - 1));
		snprintf(text, sizeof text, "%llu", (unsigned long long)tie);
		compare(text);
		snprintf(text, sizeof text, "%llu", (unsigned long long)tie + 1);
		compare(text);
		snprintf(text, sizeof text, "%llu", (unsigned long long)tie - 1);
		compare(text);
		snprintf(text, sizeof text, "%llu000e-3",
			(unsigned long long)tie); /* the same value, trailing zeros past 19 digits */
		compare(text);

		int j = 1 + (int)(rng() % 3);
		uint64_t m = (1ull << 52) | (rng() & ((1ull << 52) - 1)),
			 five = j == 1 ? 5
			: j == 2       ? 25
				       : 125;
		uint64_t digits =
			(2 * m + 1) * five; /* (2m+1)/2^j, halfway between m and m+1 units of 2^(1-j) */
		snprintf(text, sizeof text, "%llue-%d", (unsigned long long)digits, j);
		compare(text);
	}
}

static void edges(void)
{
	/* below every power of two the gap to the next double down is half as wide */
	for (int k = -1074; k <= 1023; k++) {
		between(nextafter(ldexp(1, k), 0), 8);
		between(ldexp(1, k), 4);
	}
	const char *texts[] = {"0", "-0", "1e-400", "-1e-400", "2.4703282292062327e-324",
		"2.4703282292062328e-324", "4.9e-324", "5e-324", "7.4e-324", "7.5e-324",
		"2.2250738585072011e-308", "2.2250738585072014e-308", "1.7976931348623157e308",
		"1.7976931348623158e308", "1.7976931348623159e308", "1e308", "1e309", "1e23",
		"8.98846567431158e307", "9007199254740993", "9007199254740995", "0.30000000000000004",
		"123456789012345678", "1234567890123456789", "9999999999999999999", "0.1", "1e22", "1e-22",
		"4503599627370496.5", "4503599627370497.5", "1767225600000.123", "600.2", "2.5e-320",
		"1e0000000000000000000000010", "1e-99999999", "1e99999999"};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		compare(texts[i]);
	/* the syntax: leading space, signs, a bare point, a missing exponent */
	const char *syntax[] = {" 3", "\t\n+1", "-0.0e-0", ".5", "2.", "1e", "1e+", "1.5e3x", "", "abc", "-.",
		".", "-", "00012", "1E+2", "7.25 ", "1..2", "1e2.5", "+-1",
		"0.000000000000000000000000000001"};
	for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++)
		compare(syntax[i]);
	/* not JSON numbers: refused, where glibc reads them */
	const char *refused[] = {"inf", "-Infinity", "nan", "0x10", "0x1p3"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		char *end;
		double v = small_strtod(refused[i], &end);
		CHECK(end == refused[i] + (refused[i][0] == '0') && (v == 0 || refused[i][0] == '0'));
	}
}

/* Integers of every length around the short way's 15 digits, with what may follow them. */
static void integers(void)
{
	const char *after[] = {"", "x", ".", ".5", "e", "e3", "E-2", " ", ","};
	char text[64];
	for (int len = 1; len <= 17; len++) {
		for (int k = 0; k < 40; k++) {
			int n = 0;
			if (k % 2)
				text[n++] = '-';
			for (int i = 0; i < len; i++)
				text[n++] = (char)('0' + (k < 4 ? (k < 2 ? 9 : 0) : rng() % 10));
			snprintf(text + n, sizeof text - (size_t)n, "%s",
				after[k % (sizeof after / sizeof after[0])]);
			compare(text);
		}
	}
	const char *texts[] = {"999999999999999", "-999999999999999", "1000000000000000", "-0", "0", "007",
		"-007x", "+5", "- 5"};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		compare(texts[i]);
}

void suite_strtod(void)
{
	integers();
	edges();
	ties();
	const char *env = getenv("E2BW_STRTOD_DOUBLES");
	long n = env ? atol(env) : RANDOM_DOUBLES;
	random_doubles(n);
	/* cJSON's one sscanf */
	double v = 0;
	CHECK(small_sscanf("0.30000000000000004", "%lg", &v) == 1 && v == 0.30000000000000004);
	CHECK(small_sscanf("x", "%lg", &v) == 0);
	CHECK(small_sscanf("", "%lg", &v) == EOF);
	printf("  strtod: %ld strings compared with glibc (%ld random doubles), %ld differed\n", compared, n,
		mismatched);
	CHECK(mismatched == 0);
}
