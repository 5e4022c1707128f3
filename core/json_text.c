#include "json_text.h"

#include <stdint.h>
#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

static const char hex[] = "0123456789abcdef";

/* Length of a valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), 0 when invalid, -1 when cut short. */
static int sequence(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	int len;
	uint8_t lo = 0x80, hi = 0xBF;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		uint8_t b = p[i];
		if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
			return 0;
	}
	return len;
}

/* 1 for bytes copied into a JSON string as they are: printable ASCII but
 * '"' and '\\'. Control characters are escaped; bytes >= 0x80 are checked
 * as UTF-8. */
static const uint8_t plain[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
	R16(0),
	R16(0),
	1,
	1,
	0,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1, /* '"' */
	R16(1),
	R16(1),
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	1,
	0,
	1,
	1,
	1, /* '\\' */
	R16(1),
	R16(1),
	R16(0),
	R16(0),
	R16(0),
	R16(0),
	R16(0),
	R16(0),
	R16(0),
	R16(0),
#undef R16
};

/* Writes the escape for an ASCII byte that is not plain. */
static int escape_byte(e2bw_buf *out, uint8_t c)
{
	char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
	size_t elen = 2;
	switch (c) {
	case '"':
		esc[1] = '"';
		break;
	case '\\':
		esc[1] = '\\';
		break;
	case '\n':
		esc[1] = 'n';
		break;
	case '\r':
		esc[1] = 'r';
		break;
	case '\t':
		esc[1] = 't';
		break;
	case '\b':
		esc[1] = 'b';
		break;
	case '\f':
		esc[1] = 'f';
		break;
	default:
		memcpy(esc + 1, "u00", 3);
		esc[4] = hex[c >> 4];
		esc[5] = hex[c & 15];
		elen = 6;
	}
	return e2bw_buf_append(out, esc, elen);
}

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Appends p[0..n) escaped and with invalid UTF-8 replaced, in one pass;
 * returns how many bytes at the end form a cut sequence that was not
 * written (only when !final), or -1 when out of memory. */
/* 1 when none of the 8 bytes needs attention: all printable ASCII, none
 * '"' or '\\' (SWAR: a byte of v is zero iff the "haszero" bit is set). */
static int plain8(const uint8_t *p, int raw)
{
	uint64_t v;
	memcpy(&v, p, 8);
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	if (raw)
		return !(v & highs);
#define HAS_ZERO(x) (((x)-ones) & ~(x)&highs)
	uint64_t quote = v ^ (ones * '"'), backslash = v ^ (ones * '\\');
	uint64_t low = (v - ones * 0x20) & ~v & highs; /* some byte < 0x20 */
	return !(v & highs) && !low && !HAS_ZERO(quote) && !HAS_ZERO(backslash);
#undef HAS_ZERO
}

/* How many leading bytes of p[0..n) are plain, 16 at a time (the same test
 * as plain8 in WebAssembly SIMD); a multiple of 16. */
#ifdef __wasm_simd128__
/* Nonzero lanes for bytes that are not plain: below 0x20 or from 0x80 on
 * (one signed compare catches both), '"' or '\\'. */
static inline __attribute__((always_inline)) v128_t odd_lanes(v128_t v, int raw)
{
	if (raw)
		return wasm_i8x16_lt(v, wasm_i8x16_splat(0)); /* raw text: only bytes from 0x80 on */
	v128_t odd = wasm_i8x16_lt(v, wasm_i8x16_splat(0x20));
	return wasm_v128_or(odd,
		wasm_v128_or(wasm_i8x16_eq(v, wasm_i8x16_splat('"')),
			wasm_i8x16_eq(v, wasm_i8x16_splat('\\'))));
}
#endif

static size_t plain_blocks(const uint8_t *p, size_t n, int raw)
{
	size_t i = 0;
#ifdef __wasm_simd128__
	for (; i + 32 <= n; i += 32) /* two blocks a step: one branch for both */
		if (wasm_v128_any_true(wasm_v128_or(odd_lanes(wasm_v128_load(p + i), raw),
			    odd_lanes(wasm_v128_load(p + i + 16), raw))))
			break;
	for (; i + 16 <= n; i += 16)
		if (wasm_v128_any_true(odd_lanes(wasm_v128_load(p + i), raw)))
			break;
#else
	(void)p, (void)n, (void)raw;
#endif
	return i;
}

/* raw: nothing is escaped (UTF-8 is only made valid). */
static long text_part(e2bw_buf *out, const uint8_t *p, size_t n, int final, int raw)
{
	if (e2bw_buf_reserve(out, n + 16) != 0)
		return -1;
	size_t start = 0, i = 0;
	for (;;) {
		i += plain_blocks(p + i, n - i, raw);
		while (i + 8 <= n && plain8(p + i, raw))
			i += 8; /* the common case: plain ASCII runs */
		while (i < n && (plain[p[i]] || (raw && p[i] < 0x80)))
			i++;
		if (i == n)
			break;
		uint8_t c = p[i];
		int len = c < 0x80 ? 0 : sequence(p + i, n - i);
		if (len > 0) { /* valid multi-byte character: part of the run */
			i += (size_t)len;
			continue;
		}
		if (e2bw_buf_append(out, p + start, i - start) != 0)
			return -1;
		if (c < 0x80) {
			if (escape_byte(out, c) != 0)
				return -1;
		} else {
			if (len < 0 && !final)
				return (long)(n - i); /* cut short: hold it back */
			if (e2bw_buf_append(out, replacement, 3) != 0)
				return -1; /* one per invalid byte */
		}
		start = ++i;
	}
	return e2bw_buf_append(out, p + start, n - start) != 0 ? -1 : 0;
}

/* Escapes text already known to be valid. */
static int escape_span(e2bw_buf *out, const uint8_t *p, size_t n, int raw)
{
	return text_part(out, p, n, 1, raw) < 0 ? -1 : 0;
}

static int text(e2bw_buf *out, e2bw_utf8_carry *carry, const uint8_t *p, size_t n, int final, int raw)
{
	if (!carry)
		final = 1;
	if (!p)
		p = (const uint8_t *)""; /* an empty buffer may have no storage */
	if (carry && carry->len) {
		/* finish the held-back sequence with the first bytes of this chunk */
		uint8_t joined[8];
		size_t take = n < 4 ? n : 4;
		memcpy(joined, carry->bytes, carry->len);
		memcpy(joined + carry->len, p, take);
		size_t jn = carry->len + take;
		int len = sequence(joined, jn);
		if (len < 0 && !final) { /* still cut short (n < 3): keep holding */
			memcpy(carry->bytes + carry->len, p, n);
			carry->len = (uint8_t)(carry->len + n);
			return 0;
		}
		if (len > 0) {
			if (escape_span(out, joined, (size_t)len, raw) != 0)
				return -1;
			size_t from_chunk = (size_t)len - carry->len;
			p += from_chunk;
			n -= from_chunk;
		} else if (e2bw_buf_append(out, replacement, 3) != 0) {
			return -1;
		} else if (carry->len > 1) {
			/* only the lead byte was bad: the rest of the carry is re-read */
			uint8_t rest[3];
			size_t rlen = carry->len - 1u;
			memcpy(rest, carry->bytes + 1, rlen);
			carry->len = 0;
			long held = text_part(out, rest, rlen, 1, raw);
			if (held < 0)
				return -1;
		}
		carry->len = 0;
	}
	long held = text_part(out, p, n, final, raw);
	if (held < 0)
		return -1;
	if (held > 0) {
		memcpy(carry->bytes, p + n - (size_t)held, (size_t)held);
		carry->len = (uint8_t)held;
	}
	return 0;
}

int e2bw_json_text(e2bw_buf *out, e2bw_utf8_carry *carry, const uint8_t *p, size_t n, int final)
{
	return text(out, carry, p, n, final, 0);
}

int e2bw_utf8_text(e2bw_buf *out, e2bw_utf8_carry *carry, const uint8_t *p, size_t n, int final)
{
	return text(out, carry, p, n, final, 1);
}

int e2bw_is_ascii(const uint8_t *p, size_t n)
{
	size_t i = plain_blocks(p, n, 1);
	while (i < n && p[i] < 0x80)
		i++;
	return i == n;
}

int e2bw_json_quoted(e2bw_buf *out, const char *s, size_t n)
{
	return e2bw_buf_append_char(out, '"') || escape_span(out, (const uint8_t *)s, n, 0) ||
		e2bw_buf_append_char(out, '"');
}

int e2bw_json_has_nul(const char *text, size_t len)
{
	/* Backslashes only occur inside strings in valid JSON (anything else
   * fails to parse anyway), and the last of a run of them starts an escape
   * exactly when the run is odd. memchr keeps this fast on 16 MiB content. */
	const char *p = text, *end = text + len;
	while ((p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
		const char *q = p;
		while (q < end && *q == '\\')
			q++;
		if (((q - p) & 1) && end - q >= 5 && memcmp(q, "u0000", 5) == 0)
			return 1;
		p = q;
	}
	return 0;
}
