/* printf_small.c — linked only into core.wasm, in place of musl's printf
 * family, whose engine formats every double as a long double: binary128
 * soft-float and 128-bit integer helpers came with it, ≈ 9 KiB of the module.
 *
 * C99's snprintf for the flags - + space # 0, width and precision (also '*'),
 * the lengths hh h l ll j z t, and the conversions d i u o x X c s p % e E f F
 * g G. Doubles are exact, digit for digit what glibc and musl print: the
 * binary value m·2^e becomes the integer m·2^e or m·5^-e (with the decimal
 * point moved e places) in base-10^9 limbs (bignum_small.c), and is rounded
 * on its decimal digits, half to even on exact ties. Anything else (%a, %n, %lc, %ls, L,
 * positional arguments) returns -1 having consumed nothing more. Natively
 * these are small_snprintf and so on (libc_small.h): the unit tests compare
 * them with glibc's. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "bignum_small.h"
#include "libc_small.h"

enum {
	LEFT = 1,
	PLUS = 2,
	SPACE = 4,
	ALT = 8,
	ZERO = 16
};
enum {
	LEN_HH = 1,
	LEN_H,
	LEN_L,
	LEN_LL,
	LEN_J,
	LEN_Z,
	LEN_T
};

typedef struct {
	char *buf;
	size_t cap;   /* bytes buf holds, its NUL included */
	uint64_t len; /* bytes the whole output takes, written or not */
} sink;

static void put(sink *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, o->len++)
		if (o->len + 1 < o->cap)
			o->buf[o->len] = s[i];
}

static void fill(sink *o, char c, int64_t n)
{
	while (n-- > 0)
		put(o, &c, 1);
}

/* What comes before a conversion's body of len bytes: the spaces of a
 * right-aligned field, its prefix (sign, 0x), the zeros of a '0' field. */
static void field_start(sink *o, int flags, int width, const char *prefix, int64_t len)
{
	size_t np = strlen(prefix);
	int64_t gap = width - len - (int64_t)np;
	if (!(flags & (LEFT | ZERO)))
		fill(o, ' ', gap);
	put(o, prefix, np);
	if ((flags & (LEFT | ZERO)) == ZERO)
		fill(o, '0', gap);
}

/* The spaces of a left-aligned field that began at output offset start. */
static void field_end(sink *o, int flags, int width, uint64_t start)
{
	if (flags & LEFT)
		fill(o, ' ', width - (int64_t)(o->len - start));
}

static void put_int(sink *o, uint64_t v, const char *prefix, int flags, int width, int prec, char conv)
{
	char digits[24], *end = digits + sizeof digits, *p = end;
	const char *hex = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	unsigned base = conv == 'o' ? 8 : (conv | 32) == 'x' ? 16 : 10;
	for (; v; v /= base)
		*--p = hex[v % base];
	int nd = (int)(end - p), np = (int)strlen(prefix);
	if (prec < 0)
		prec = (flags & (LEFT | ZERO)) == ZERO && width - np > 1 ? width - np : 1;
	if ((flags & ALT) && base == 8 && prec <= nd)
		prec = nd + 1; /* a leading 0 */
	uint64_t start = o->len;
	field_start(o, flags & ~ZERO, width, prefix, prec > nd ? prec : nd);
	fill(o, '0', prec - nd);
	put(o, p, (size_t)nd);
	field_end(o, flags, width, start);
}

/* ---- doubles ---------------------------------------------------------- */

#define LIMBS 90 /* 2^53·5^1074 < 10^767: 86 limbs */

/* All the decimal digits of |x| (finite): d[1..n] with d[0] == '0' (room for
 * a rounding carry), n returned, *e10 the power of ten of d[1]. */
static int decimal_digits(uint64_t bits, char buf[LIMBS * 9 + 1], char **d, int *e10)
{
	uint64_t m = bits & ((1ull << 52) - 1);
	int e = (int)(bits >> 52 & 0x7ff);
	if (e)
		m |= 1ull << 52;
	else
		e = 1;
	e -= 1075;
	if (!m)
		e = 0;
	while (e < 0 && !(m & 1))
		m >>= 1, e++; /* fewer limbs to multiply */
	uint32_t limb[LIMBS];
	int n = bignum_mul_pow(limb, bignum_set(limb, m), e < 0 ? 5 : 2,
		e < 0 ? -e : e); /* m·2^e, or m·5^-e·10^e */

	char *p = buf + 1;
	buf[0] = '0';
	for (int i = n - 1; i >= 0; i--, p += 9)
		for (int j = 8; j >= 0; j--, limb[i] /= 10)
			p[j] = (char)('0' + limb[i] % 10);
	int nd = (int)(p - buf - 1);
	*d = buf;
	while (nd > 1 && (*d)[1] == '0')
		++*d, nd--;
	*e10 = nd - 1 + (e < 0 ? e : 0);
	return nd;
}

/* Keeps the first keep digits (none when keep <= 0), rounding half to even
 * on the exact value; a carry out of d[1] moves the point. */
static void round_digits(char *d, int *nd, int *e10, int64_t keep)
{
	if (keep >= *nd)
		return;
	if (keep < 0) { /* below half of the last place kept */
		*nd = 0;
		return;
	}
	int k = (int)keep, up = d[k + 1] > '5' || (d[k + 1] == '5' && (d[k] & 1)); /* '0' is even */
	for (int i = k + 2; i <= *nd && d[k + 1] == '5'; i++)
		up |= d[i] != '0';
	*nd = k;
	if (!up)
		return;
	while (d[k] == '9')
		d[k--] = '0';
	d[k]++;
	if (k == 0) { /* 99.9 became 100 */
		d[0] = '0';
		d[1] = '1';
		++*e10;
		if (!*nd)
			*nd = 1;
	}
}

static void put_digits(sink *o, const char *d, int nd, int64_t from, int64_t to)
{
	for (; from <= to; from++)
		put(o, from >= 1 && from <= nd ? &d[from] : "0", 1);
}

static void put_double(sink *o, double x, int flags, int width, int prec, char conv)
{
	uint64_t bits, start = o->len;
	memcpy(&bits, &x, sizeof bits);
	const char *prefix = bits >> 63 ? "-" : flags & PLUS ? "+" : flags & SPACE ? " " : "";
	int upper = !(conv & 32), g = (conv | 32) == 'g';
	conv |= 32;
	if ((bits >> 52 & 0x7ff) == 0x7ff) {
		field_start(o, flags & ~ZERO, width, prefix, 3);
		put(o, bits << 12 ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), 3);
		field_end(o, flags, width, start);
		return;
	}

	char buf[LIMBS * 9 + 1], *d;
	int e10, nd = decimal_digits(bits, buf, &d, &e10);
	if (prec < 0)
		prec = 6;
	if (g) { /* prec significant digits, then %e or %f by the exponent */
		if (!prec)
			prec = 1;
		round_digits(d, &nd, &e10, prec);
		conv = e10 < prec && e10 >= -4 ? 'f' : 'e';
	} else {
		round_digits(d, &nd, &e10, (conv == 'f' ? e10 + 1 : 1) + (int64_t)prec);
	}
	int point_at = conv == 'f' ? e10 + 1 : 1; /* d[point_at] is the digit of the units */
	if (g) {
		prec -= point_at;
		if (!(flags & ALT)) { /* no trailing zeros */
			if (prec > nd - point_at)
				prec = nd > point_at ? nd - point_at : 0;
			while (prec > 0 && d[point_at + prec] == '0')
				prec--; /* stops at d[1]: not 0 unless x is */
		}
	}

	int point = prec || (flags & ALT), ex = e10 < 0 ? -e10 : e10;
	field_start(o, flags, width, prefix,
		(point_at < 1 ? 1 : point_at) + point + (int64_t)prec +
			(conv == 'e' ? (ex >= 100 ? 5 : 4) : 0));
	if (point_at < 1)
		put(o, "0", 1);
	put_digits(o, d, nd, 1, point_at);
	if (point)
		put(o, ".", 1);
	put_digits(o, d, nd, (int64_t)point_at + 1, (int64_t)point_at + prec);
	if (conv == 'e') {
		put(o, upper ? "E" : "e", 1);
		put_int(o, (unsigned)ex, e10 < 0 ? "-" : "+", 0, 0, 2, 'd');
	}
	field_end(o, flags, width, start);
}

/* ---- the format --------------------------------------------------------- */

static int number(const char **f)
{
	int v = 0;
	for (; **f >= '0' && **f <= '9'; ++*f)
		v = v <= (INT_MAX - 9) / 10 ? v * 10 + (**f - '0') : INT_MAX;
	return v;
}

/* An integer argument of the given length, its sign extended for d and i.
 * (Signed arguments are read as their unsigned type: the same bits.) */
static uint64_t int_arg(va_list *ap, int len, int is_signed)
{
	uint64_t v;
	int bits = 64;
	switch (len) {
	case LEN_L:
		v = va_arg(*ap, unsigned long), bits = sizeof(long) * 8;
		break;
	case LEN_LL:
		v = va_arg(*ap, unsigned long long);
		break;
	case LEN_J:
		v = va_arg(*ap, uintmax_t);
		break;
	case LEN_Z:
	case LEN_T:
		v = va_arg(*ap, size_t), bits = sizeof(size_t) * 8;
		break;
	default:
		v = va_arg(*ap, unsigned), bits = len == LEN_HH ? 8 : len == LEN_H ? 16 : sizeof(int) * 8;
	}
	if (bits < 64) {
		v &= (1ull << bits) - 1;
		if (is_signed && v >> (bits - 1))
			v |= ~0ull << bits;
	}
	return v;
}

/* One conversion, after its '%'; 0 when it is one this file refuses. */
static int convert(sink *o, const char **fmt, va_list *ap)
{
	static const char flag_chars[] = "-+ #0"; /* in the order of LEFT..ZERO */
	const char *f = *fmt, *flag;
	int flags = 0, width, prec = -1, len = 0;
	while (*f && (flag = strchr(flag_chars, *f)))
		flags |= 1 << (flag - flag_chars), f++;
	if (*f == '*') {
		f++;
		width = va_arg(*ap, int);
		if (width < 0)
			flags |= LEFT, width = width == INT_MIN ? INT_MAX : -width;
	} else {
		width = number(&f);
	}
	if (*f == '.') {
		if (*++f == '*') {
			f++;
			prec = va_arg(*ap, int);
			if (prec < 0)
				prec = -1;
		} else {
			prec = number(&f);
		}
	}
	if (*f == 'h')
		len = *++f == 'h' ? (f++, LEN_HH) : LEN_H;
	else if (*f == 'l')
		len = *++f == 'l' ? (f++, LEN_LL) : LEN_L;
	else if (*f == 'j')
		len = LEN_J, f++;
	else if (*f == 'z')
		len = LEN_Z, f++;
	else if (*f == 't')
		len = LEN_T, f++;
	char conv = *f++;
	*fmt = f;

	uint64_t start = o->len, v;
	const char *text; /* c, s, p's (nil): a string in the field */
	char c;
	size_t n = 1;
	switch (conv) {
	case 'd':
	case 'i':
	case 'u':
	case 'o':
	case 'x':
	case 'X': {
		int is_signed = conv == 'd' || conv == 'i';
		v = int_arg(ap, len, is_signed);
		const char *prefix =
			(flags & ALT) && v && (conv | 32) == 'x' ? conv == 'x' ? "0x" : "0X" : "";
		if (is_signed) {
			prefix = v >> 63 ? "-" : flags & PLUS ? "+" : flags & SPACE ? " " : "";
			if (v >> 63)
				v = 0 - v;
		}
		put_int(o, v, prefix, flags, width, prec, conv);
		return 1;
	}
	case 'p':
		v = (uintptr_t)va_arg(*ap, void *);
		if (v) {
			put_int(o, v, "0x", flags, width, prec, 'x');
			return 1;
		}
		text = "(nil)", n = 5;
		break;
	case 'c':
		if (len)
			return 0;
		c = (char)va_arg(*ap, int);
		text = &c;
		break;
	case 's':
		if (len)
			return 0;
		text = va_arg(*ap, const char *);
		if (!text)
			text = "(null)";
		for (n = 0; (prec < 0 || n < (size_t)prec) && text[n]; n++)
			continue;
		break;
	case 'e':
	case 'E':
	case 'f':
	case 'F':
	case 'g':
	case 'G':
		if (len && len != LEN_L)
			return 0;
		put_double(o, va_arg(*ap, double), flags, width, prec, conv);
		return 1;
	case '%':
		put(o, "%", 1);
		return 1;
	default:
		return 0;
	}
	field_start(o, flags & ~ZERO, width, "", (int64_t)n);
	put(o, text, n);
	field_end(o, flags, width, start);
	return 1;
}

int LIBC_SMALL(vsnprintf)(char *restrict s, size_t n, const char *restrict format, va_list args)
{
	sink o = {s, n, 0};
	const char *fmt = format;
	va_list ap;
	va_copy(ap, args);
	int ok = 1;
	while (ok && *fmt) { /* a refused conversion may have stepped past a final NUL */
		const char *text = fmt;
		while (*fmt && *fmt != '%')
			fmt++;
		put(&o, text, (size_t)(fmt - text));
		if (*fmt)
			fmt++, ok = convert(&o, &fmt, &ap);
	}
	va_end(ap);
	if (n)
		s[o.len < n ? o.len : n - 1] = '\0';
	return ok && o.len <= INT_MAX ? (int)o.len : -1;
}

int LIBC_SMALL(snprintf)(char *restrict s, size_t n, const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = LIBC_SMALL(vsnprintf)(s, n, fmt, ap);
	va_end(ap);
	return r;
}

int LIBC_SMALL(vsprintf)(char *restrict s, const char *restrict fmt, va_list ap)
{
	return LIBC_SMALL(vsnprintf)(s, INT_MAX, fmt, ap);
}

/* cJSON prints every number with sprintf "%1.15g" (and reads it back with
 * sscanf "%lg"). An integral value under 10^15 is then its digits: written
 * here, so printing ids, sizes and counts runs (and in core.wasm compiles)
 * none of the formatter above. -1 for anything else. */
static int integral_15g(char *s, const char *fmt, va_list ap)
{
	if (fmt[0] != '%' || fmt[1] != '1' || fmt[2] != '.' || fmt[3] != '1' || fmt[4] != '5' ||
		fmt[5] != 'g' || fmt[6])
		return -1;
	va_list aq;
	va_copy(aq, ap);
	double x = va_arg(aq, double);
	va_end(aq);
	if (!(x > -1e15 && x < 1e15) || x != (double)(int64_t)x || (x == 0 && __builtin_signbit(x)))
		return -1;
	uint64_t v = (uint64_t)(x < 0 ? -x : x);
	char digits[16];
	int n = 0, len = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while (v /= 10);
	if (x < 0)
		s[len++] = '-';
	while (n)
		s[len++] = digits[--n];
	s[len] = '\0';
	return len;
}

int LIBC_SMALL(sprintf)(char *restrict s, const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = integral_15g(s, fmt, ap);
	if (r < 0)
		r = LIBC_SMALL(vsnprintf)(s, INT_MAX, fmt, ap);
	va_end(ap);
	return r;
}

#ifdef E2BW_WASM
/* LLVM turns some calls into these variants (integer-only, or without long
 * double) of Emscripten's libc; they are the same functions here. */
int siprintf(char *restrict s, const char *restrict fmt, ...) __attribute__((used, alias("sprintf")));
int __small_sprintf(char *restrict s, const char *restrict fmt, ...) __attribute__((used, alias("sprintf")));
int vsiprintf(char *restrict s, const char *restrict fmt, va_list ap)
	__attribute__((used, alias("vsprintf")));
int __small_vsprintf(char *restrict s, const char *restrict fmt, va_list ap)
	__attribute__((used, alias("vsprintf")));
int vsniprintf(char *restrict s, size_t n, const char *restrict fmt, va_list ap)
	__attribute__((used, alias("vsnprintf")));
int __small_vsnprintf(char *restrict s, size_t n, const char *restrict fmt, va_list ap)
	__attribute__((used, alias("vsnprintf")));
#endif
