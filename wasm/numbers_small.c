/* numbers_small.c — linked only into core.wasm (Emscripten), in place of
 * musl's strtod and sscanf, whose arbitrary-precision scanner (__floatscan)
 * and format engine were 10 KiB of the module. The core parses decimal
 * numbers only: JSON numbers in EPP
 * messages and E2B answers (ids, seconds, ports, sizes, offsets) and the
 * seconds of an option or a Retry-After header.
 *
 * Exact for up to 19 significant digits: Clinger's fast path (the digits fit
 * a double and |exponent| <= 22: one correctly rounded IEEE operation), else
 * one binary128 (long double) multiply or divide by a power of ten that is
 * exact up to 10^48, rounded once more to double — off by one unit in the
 * last place only in vanishingly rare halfway cases. Beyond 19 digits the
 * rest are dropped (truncation, < 1e-18 relative). Syntax: C-locale strtod
 * for decimal numbers — leading space, sign, digits, fraction, exponent.
 * "inf", "nan" and hexadecimal are not JSON numbers and are not converted
 * (*end = s), so option values like "0x10" are refused rather than guessed. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double exact_powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_digit(char c) { return c >= '0' && c <= '9'; }

double strtod(const char *s, char **end) {
  const char *p = s;
  while (*p == ' ' || (*p >= '\t' && *p <= '\r')) p++;
  int negative = 0;
  if (*p == '+' || *p == '-') negative = *p++ == '-';

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
    if (end) *end = (char *)s;
    return 0;
  }
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int eneg = 0;
    if (*q == '+' || *q == '-') eneg = *q++ == '-';
    if (is_digit(*q)) {
      int e = 0;
      for (; is_digit(*q); q++)
        if (e < 100000) e = e * 10 + (*q - '0');
      exp10 += eneg ? -e : e;
      p = q;
    }
  }
  if (end) *end = (char *)p;

  double value;
  if (digits == 0) {
    value = 0;
  } else if (digits <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
    value = exp10 < 0 ? (double)digits / exact_powers[-exp10] : (double)digits * exact_powers[exp10];
  } else {
    long double power = 1, x = (long double)digits;
    int n = exp10 < 0 ? -exp10 : exp10;
    if (n > 400) n = 400; /* past any double either way */
    while (n--) power *= 10;
    value = (double)(exp10 < 0 ? x / power : x * power);
    if (isinf(value) || value == 0) errno = ERANGE;
  }
  return negative ? -value : value;
}

/* The core's one sscanf: cJSON reading back a number it printed ("%lg") to
 * see whether 15 digits were enough. Any other format is a new use that this
 * file must learn first: it traps rather than scan wrongly. */
int sscanf(const char *restrict text, const char *restrict format, ...) {
  if (strcmp(format, "%lg") != 0) __builtin_trap();
  char *end;
  double value = strtod(text, &end);
  if (end == text) return *text ? 0 : EOF;
  va_list ap;
  va_start(ap, format);
  *va_arg(ap, double *) = value;
  va_end(ap);
  return 1;
}
