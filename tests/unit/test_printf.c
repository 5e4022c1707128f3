/* test_printf.c — wasm/printf_small.c (core.wasm's snprintf, built here as
 * small_snprintf) against glibc's, byte for byte and return value for return
 * value: every format the core and cJSON use; random integers at every
 * conversion, length, flag, width and precision; special and random doubles
 * (all bit patterns, exact ties, powers of ten) at %e %f %g with flags,
 * sprintf "%1.15g" (cJSON's every number; integers take a short way),
 * widths and precisions; truncation at small buffer sizes, and nothing
 * written past the size given. E2BW_PRINTF_DOUBLES sets how many random
 * doubles (default 200,000; 20,000 under ASan). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "xorshift.h"
#include "libc_small.h"
#include "suites.h"

/* The formats are built at run time: that is the point. */
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

#define BUF 1024
#define CANARY 0x5a

/* Under ASan every THIN-th combination of flags, width and precision is
 * formatted, and fewer random doubles: the same kinds, in a tenth of the time. */
#if defined(__SANITIZE_ADDRESS__)
#define THIN 4
#define RANDOM_DOUBLES 20000
#else
#define THIN 1
#define RANDOM_DOUBLES 200000
#endif

static long compared, mismatched;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	return xorshift64(&rng_state);
}

static void report(const char *fmt, size_t size, int want_n, const char *want, int got_n, const char *got)
{
	if (mismatched++ >= 12)
		return;
	fprintf(stderr, "  FAIL printf \"%s\" size %zu:\n    glibc %d \"%.300s\"\n    small %d \"%.300s\"\n",
		fmt, size, want_n, want, got_n, got);
}

/* At buffer size `size`, glibc with want_fmt and the small one with got_fmt
 * (the same but where glibc is wrong): same return, same bytes, nothing
 * written past size. */
static int compare_at(size_t size, const char *want_fmt, const char *got_fmt, va_list ap)
{
	char want[BUF], got[BUF];
	va_list aq;
	memset(want, CANARY, sizeof want);
	memset(got, CANARY, sizeof got);
	va_copy(aq, ap);
	int want_n = vsnprintf(want, size, want_fmt, ap);
	int got_n = small_vsnprintf(got, size, got_fmt, aq);
	va_end(aq);
	compared++;
	int same = want_n == got_n && memcmp(want, got, sizeof want) == 0;
	for (size_t i = size; i < sizeof got; i++)
		same &= got[i] == CANARY;
	if (!same)
		report(got_fmt, size, want_n, size ? want : "", got_n, size ? got : "");
	return want_n;
}

/* Full size, then (when truncate) every size that cuts the output short. */
static void compare_v(int truncate, const char *want_fmt, const char *got_fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = compare_at(BUF, want_fmt, got_fmt, aq);
	va_end(aq);
	if (!truncate || n < 0 || n >= BUF)
		return;
	size_t sizes[] = {0, 1, 2, (size_t)n / 2, (size_t)n, (size_t)n + 1};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		va_copy(aq, ap);
		compare_at(sizes[i], want_fmt, got_fmt, aq);
		va_end(aq);
	}
}

static void compare(int truncate, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void compare(int truncate, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	compare_v(truncate, fmt, fmt, ap);
	va_end(ap);
}

static void compare_as(int truncate, const char *want_fmt, const char *got_fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void compare_as(int truncate, const char *want_fmt, const char *got_fmt, ...)
{
	va_list ap;
	va_start(ap, got_fmt);
	compare_v(truncate, want_fmt, got_fmt, ap);
	va_end(ap);
}

/* ---- the core's and cJSON's own formats --------------------------------- */

static void core_formats(void)
{
	char exact[5] = {'a', 'b', 'c', 'd', 'e'}; /* no NUL: %.*s must stop at 5 */
	char *body = malloc(5);
	memcpy(body, exact, 5);
	compare(1, "%.*s", 5, body);
	compare(1, "%.*s", 3, body);
	free(body);
	const char *words[] = {"", "x", "config", "sandbox \"abc\" doesn't exist", "é€😀 text",
		"a-long-string-of-300-chars"};
	char long_text[700];
	memset(long_text, 'L', sizeof long_text - 1);
	long_text[sizeof long_text - 1] = '\0';
	for (size_t i = 0; i <= sizeof words / sizeof words[0]; i++) {
		const char *w = i < sizeof words / sizeof words[0] ? words[i] : long_text;
		compare(1, "%s", w);
		compare(1, "config.%s", w);
		compare(1, "%s%s%s", w, ":", w);
		compare(1, "https://49983-%s.%s", w, "e2b.app");
		compare(1, "chmod/chown of '%.200s' failed (exit %g): %.150s", w, 1.0, w);
		compare(1, "%.40s %.60s %.100s %.128s %.300s %.500s", w, w, w, w, w, w);
		compare(1, "multipart/form-data; boundary=%s", w);
		compare(1, ",\"encoding\":\"%s\",\"offset\":%llu,\"content\":\"", w, 123456789012ull);
	}
	unsigned long long sizes[] = {0, 1, 4095, 16777216, 1099511627776ull, ULLONG_MAX};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		compare(1, "\",\"size\":%llu", sizes[i]);
		compare(1, "bytes=%llu-%llu", sizes[i], sizes[i] / 2);
		compare(1, "bytes=%llu-", sizes[i]);
		compare(1, ":%lld", (long long)sizes[i]);
		compare(1, "%lld", -(long long)(sizes[i] / 3));
	}
	for (unsigned v = 0; v < 70000; v += 997) {
		compare(1, "e2bw-%08x-%u", v * 65537u, v);
		compare(1, "u%04x", v & 0xffff);
		compare(1, "%04o", v & 07777);
		compare(1, "HTTP %d", (int)v - 500);
		compare(1, "%i.%i.%i", 1, 7, (int)v);
		compare(1, "%lu", (unsigned long)v * 100003u);
	}
	compare(1, "%04d-%02d-%02dT%02d:%02d:%02dZ", 2026, 11, 30, 0, 5, 59);
	compare(1, "%04d-%02d-%02dT%02d:%02d:%02dZ", 99999, 1, 1, 23, 59, 9);
	double numbers[] = {0, 1, 0.25, 1e-3, 59.9, 600.2, 86400.5, 3600, 1767225600000.0, 1767225600000.123,
		9007199254740993.0, -7, 42.5, 1.5e-7, 1e300, 2.5e-320, 0.1, 0.30000000000000004,
		123456789012.0};
	for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
		double x = numbers[i];
		compare(1, "%1.15g", x);
		compare(1, "%1.17g", x);
		compare(1, "%g", x);
		compare(1, "%.0f", x);
		compare(1, "w%.0f", x);
		compare(1, "%.3f-%u", x, 7u);
		compare(1, "must be a number of seconds from %g to %g", x, x * 1000);
	}
	compare(1, "null");
	compare(1, "100%% done, %d%%", 42);
}

/* ---- integers ----------------------------------------------------------- */

enum {
	HH,
	H,
	NONE,
	L,
	LL,
	J,
	Z,
	T
};
static const char *const lengths[] = {"hh", "h", "", "l", "ll", "j", "z", "t"};

/* One value through a format of the given length: the argument of its type. */
static void compare_int(int truncate, const char *fmt, int len, int is_signed, uint64_t v)
{
	switch (len) {
	case L:
		is_signed ? compare(truncate, fmt, (long)v) : compare(truncate, fmt, (unsigned long)v);
		break;
	case LL:
		is_signed ? compare(truncate, fmt, (long long)v)
			  : compare(truncate, fmt, (unsigned long long)v);
		break;
	case J:
		is_signed ? compare(truncate, fmt, (intmax_t)v) : compare(truncate, fmt, (uintmax_t)v);
		break;
	case Z:
	case T:
		is_signed ? compare(truncate, fmt, (ptrdiff_t)v) : compare(truncate, fmt, (size_t)v);
		break;
	default:
		is_signed ? compare(truncate, fmt, (int)v) : compare(truncate, fmt, (unsigned)v);
		break;
	}
}

static uint64_t random_int(void)
{
	uint64_t v = rng() >> (rng() % 64); /* every magnitude */
	return rng() & 1 ? 0 - v : v;
}

static void integers(void)
{
	const char convs[] = "diuoxX";
	const char *widths[] = {"", "1", "6", "25"};
	const char *precs[] = {"", ".", ".0", ".1", ".5", ".25"};
	uint64_t fixed[] = {0, 1, 7, 8, 255, 256, 65535, 65536, INT_MAX, (uint64_t)INT_MIN, UINT_MAX,
		LLONG_MAX, (uint64_t)LLONG_MIN, UINT64_MAX};
	long formats = 0;
	for (int c = 0; convs[c]; c++)
		for (int len = HH; len <= T; len++)
			for (int flags = 0; flags < 32; flags++)
				for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
					for (size_t p = 0; p < sizeof precs / sizeof precs[0]; p++) {
						char real[64];
						snprintf(real, sizeof real, "[%%%s%s%s%s%s%s%s%s%c]",
							flags & 1 ? "-" : "", flags & 2 ? "+" : "",
							flags & 4 ? " " : "", flags & 8 ? "#" : "",
							flags & 16 ? "0" : "", widths[w], precs[p],
							lengths[len], convs[c]);
						if ((flags + (int)w + (int)p + len) % THIN)
							continue;
						int is_signed = c < 2;
						formats++;
						compare_int(formats % 8 == 0, real, len, is_signed,
							fixed[rng() % (sizeof fixed / sizeof fixed[0])]);
						compare_int(0, real, len, is_signed, random_int());
						compare_int(0, real, len, is_signed, random_int() & 0xffff);
					}
	/* '*' width and precision, negative ones too */
	for (int i = 0; i < 20000; i++) {
		int w = (int)(rng() % 61) - 30, p = (int)(rng() % 34) - 3;
		int v = (int)random_int();
		compare(i % 8 == 0, "[%*d|%.*d|%*.*x|%-*.*o]", w, v, p, v, w, p, (unsigned)v, w, p,
			(unsigned)v);
	}
}

/* ---- strings, characters, pointers ---------------------------------------- */

static void text(void)
{
	const char *strings[] = {"", "a", "hello", "é€😀", "a rather longer string, 40 characters.."};
	const char *formats[] = {"[%s]", "[%10s]", "[%-10s]", "[%.3s]", "[%.0s]", "[%10.2s]", "[%-10.2s]",
		"[%.200s]", "[%1s]"};
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
		for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
			compare(1, formats[f], strings[i]);
		for (int w = -12; w <= 12; w += 4)
			for (int p = -1; p <= 8; p += 3)
				compare(1, "[%*.*s][%-*s][%.*s]", w, p, strings[i], w, strings[i], p,
					strings[i]);
	}
	char *volatile none = NULL; /* glibc and musl print "(null)" */
	compare(1, "[%s]", none);
	compare(1, "[%10s]", none);
	int chars[] = {'a', ' ', 0, 255, -1, 'z' + 256};
	for (size_t i = 0; i < sizeof chars / sizeof chars[0]; i++)
		compare(1, "[%c][%5c][%-5c][%*c]", chars[i], chars[i], chars[i], -3, chars[i]);
	int local;
	void *pointers[] = {NULL, (void *)0x1234, &local, (void *)UINTPTR_MAX};
	for (size_t i = 0; i < sizeof pointers / sizeof pointers[0]; i++)
		compare(1, "[%p][%20p][%-20p][%3p]", pointers[i], pointers[i], pointers[i], pointers[i]);
	compare(1, "[%%][%d%%%s]", 5, "x");
}

/* ---- doubles ------------------------------------------------------------- */

static const char *const double_formats[] = {"%g", "%1.15g", "%1.17g", "%.0f", "%e", "%f", "%.3f", "%G", "%E",
	"%F"};

/* %#g (format got_fmt, P significant digits) against glibc's %#e or %#f as C
 * defines it: glibc drops the zeros that '#' keeps when %#g rounds up to a
 * new power of ten (999999.5: "1.e+06" where C and musl say "1.00000e+06"). */
static void compare_alt_g(int truncate, const char *spec, int P, int upper, const char *got_fmt, double x)
{
	char e_form[128], want_fmt[64];
	snprintf(e_form, sizeof e_form, "%.*e", P - 1, x);
	const char *e = strchr(e_form, 'e');
	int X = e ? atoi(e + 1) : 0;
	if (P > X && X >= -4)
		snprintf(want_fmt, sizeof want_fmt, "[%%%s.%d%c]", spec, P - 1 - X, upper ? 'F' : 'f');
	else
		snprintf(want_fmt, sizeof want_fmt, "[%%%s.%d%c]", spec, P - 1, upper ? 'E' : 'e');
	compare_as(truncate, want_fmt, got_fmt, x);
}

static void all_double_formats(double x, int truncate)
{
	const char convs[] = "eEfFgG";
	const char *widths[] = {"", "1", "12", "30"};
	const char *precs[] = {"", ".", ".0", ".1", ".3", ".6", ".10", ".15", ".16", ".17", ".18", ".20",
		".30", ".60"};
	for (int c = 0; convs[c]; c++)
		for (int flags = 0; flags < 32; flags++)
			for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
				for (size_t p = 0; p < sizeof precs / sizeof precs[0]; p++) {
					if ((flags + (int)w + (int)p) % (3 * THIN))
						continue; /* a third of the combinations, all of each kind */
					char spec[16], fmt[64];
					snprintf(spec, sizeof spec, "%s%s%s%s%s%s", flags & 1 ? "-" : "",
						flags & 2 ? "+" : "", flags & 4 ? " " : "",
						flags & 8 ? "#" : "", flags & 16 ? "0" : "", widths[w]);
					snprintf(fmt, sizeof fmt, "[%%%s%s%c]", spec, precs[p], convs[c]);
					if ((flags & 8) && (convs[c] | 32) == 'g') {
						int given = precs[p][0] ? atoi(precs[p] + 1) : 6;
						compare_alt_g(truncate, spec, given ? given : 1,
							convs[c] == 'G', fmt, x);
					} else {
						compare(truncate, fmt, x);
					}
				}
	compare(truncate, "%lf %lg %le", x, x, x);
}

static double from_bits(uint64_t bits)
{
	double x;
	memcpy(&x, &bits, sizeof x);
	return x;
}

static void special_doubles(void)
{
	double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 0.5, 1.5, 2.5, -2.5, 3.5, 0.125,
		0.375, 0.0625, 1e23, 8.5, 9.5, 5e-324, -5e-324, 1e-323, 2.2250738585072014e-308,
		2.225073858507201e-308, 1.7976931348623157e308, 9007199254740992.0, 9007199254740993.0, 1e15,
		1e16, 1e17, 1e21, 1e22, 123456789012345678.0, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 100, 1e-5,
		1e-4, 9.9999e-5, 0.0001, 99999.95, 999999.5, 9999995.0, 0.05, 0.15, 0.25, 0.35, 1e100, 1e-100,
		4.35, 2.675, 1.005, 1767225600000.0, 86400.5, 600.2, 1e308, 4.9406564584124654e-324,
		from_bits(0x000fffffffffffffull), from_bits(0x0010000000000000ull),
		from_bits(0x7fefffffffffffffull), from_bits(0x7ff0000000000001ull),
		from_bits(0xfff8000000000001ull), 0.000123456789, 123456.789e10};
	for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
		all_double_formats(specials[i], 1);
	/* around every power of ten and the %g switch points: 10^k, 0.5·10^k,
   * 9.5·10^k, 9.9999995·10^k and their neighbours */
	for (int k = -30; k <= 30; k++) {
		double bases[] = {1, 0.5, 9.5, 9.9999995, 9.99999995, 9.999999999999999};
		for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
			char text_form[48];
			snprintf(text_form, sizeof text_form, "%.17ge%d", bases[b], k);
			double x = strtod(text_form, NULL);
			double around[] = {x, nextafter(x, 0), nextafter(x, INFINITY)};
			for (int a = 0; a < 3; a++)
				for (size_t f = 0; f < sizeof double_formats / sizeof double_formats[0]; f++)
					compare(1, double_formats[f], around[a]);
			all_double_formats(x, 0);
		}
	}
}

/* One double at the formats the core uses and at random precisions. */
static void random_double(double x, int truncate)
{
	for (size_t f = 0; f < sizeof double_formats / sizeof double_formats[0]; f++)
		compare(truncate, double_formats[f], x);
	int p = (int)(rng() % 25);
	compare(truncate, "%.*e|%.*f|%.*g", p, x, p, x, p, x);
	char fmt[32];
	snprintf(fmt, sizeof fmt, "[%%#.%dg]", p);
	compare_alt_g(truncate, "#", p ? p : 1, 0, fmt, x);
}

static void random_doubles(long n)
{
	for (long i = 0; i < n; i++) {
		double x;
		switch (i % 4) {
		case 0: /* any bit pattern: subnormals, huge, tiny, NaNs */
		case 1:
			x = from_bits(rng());
			break;
		case 2: /* dyadic rationals: exact ties at %.Nf and %.Ne */
			x = (double)(int64_t)(rng() % 20000001 - 10000000) / (double)(1ull << (rng() % 30));
			break;
		default: /* integers up to 2^64 and short decimals */
			x = rng() & 1 ? (double)(rng() >> (rng() % 64))
				      : (double)(int64_t)(rng() % 2000000) * pow(10, (int)(rng() % 40) - 20);
			break;
		}
		random_double(x, i % 16 == 0);
	}
}

/* ---- what the small printf refuses ------------------------------------------ */

static void refused(void)
{
	const char *formats[] = {"ab%n", "ab%a", "ab%Lf", "ab%lc", "ab%ls", "ab%1$d", "ab%y", "ab%", "ab%hs",
		"ab%llc", "ab%hf"};
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
		char out[8];
		memset(out, CANARY, sizeof out);
		CHECK(small_snprintf(out, 4, formats[i], 1) == -1);
		CHECK_STR(out, "ab"); /* what came before, terminated */
		CHECK(out[4] == CANARY);
	}
}

/* sprintf "%1.15g", cJSON's way of printing every number (integral ones
 * under 10^15 take a short way), against glibc's. */
static void cjson_numbers(void)
{
	double xs[] = {0, -0.0, 1, -1, 9, 10, 99, 100, 999999999999999, -999999999999999, 1e15, -1e15,
		1e15 - 0.5, 9007199254740993.0, 0.5, -0.5, 1e-7, 123456789012345, 42.000001, NAN, INFINITY,
		-INFINITY};
	char want[64], got[64];
	for (size_t i = 0; i < sizeof xs / sizeof xs[0] + 20000; i++) {
		double x = i < sizeof xs / sizeof xs[0]
			? xs[i]
			: (double)(int64_t)(rng() % 2000000000000000ull) - 1e15;
		if (i % 7 == 0 && i >= sizeof xs / sizeof xs[0])
			x /= 1000; /* and some with a fraction */
		int want_n = sprintf(want, "%1.15g", x), got_n = small_sprintf(got, "%1.15g", x);
		compared++;
		if (want_n != got_n || strcmp(want, got) != 0)
			report("%1.15g (sprintf)", 64, want_n, want, got_n, got);
	}
}

void suite_printf(void)
{
	cjson_numbers();
	core_formats();
	integers();
	text();
	special_doubles();
	const char *env = getenv("E2BW_PRINTF_DOUBLES");
	long n = env ? atol(env) : RANDOM_DOUBLES;
	random_doubles(n);
	refused();
	char buf[8];
	CHECK(small_sprintf(buf, "%d|%s", 42, "ab") == 5 && strcmp(buf, "42|ab") == 0);
	CHECK(small_snprintf(NULL, 0, "%d", 12345) == 5);
	printf("  printf: %ld calls compared with glibc (%ld random doubles), %ld differed\n", compared, n,
		mismatched);
	CHECK(mismatched == 0);
}
