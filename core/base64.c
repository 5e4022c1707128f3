#include "base64.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

#ifdef __wasm_simd128__
/* 12 bytes to 16 characters per step (Muła and Lemire, "Faster Base64
 * Encoding and Decoding Using AVX2 Instructions", 2018, in 128 bits). Each
 * step loads 16 bytes, so it stops with at least 4 left for the scalar loop.
 * Returns the bytes consumed (a multiple of 12). */
static size_t encode_blocks(const uint8_t *in, size_t len, char *w)
{
	/* sextet + offset[class] is its character; classes: 0 for 0..25 ('A'),
   * 1 for 26..51 ('a'), 2..11 for 52..61 ('0'), 12 for 62 ('+'), 13 for 63 ('/') */
	const v128_t offset = wasm_i8x16_make(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19, -16, 0, 0);
	size_t i = 0;
	for (; i + 16 <= len; i += 12, w += 16) {
		v128_t v = wasm_v128_load(in + i);
		/* bytes a b c to b a c b per 32-bit lane: the 16-bit words ab and bc */
		v = wasm_i8x16_shuffle(v, v, 1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
		/* sextets s0..s3 into bytes 0..3: ab>>10 and bc>>6 in the low bytes,
     * ab<<4 and bc<<8 in the high ones. The shifts differ between the even
     * and odd 16-bit lanes: two shifts and a select each (a multiply by
     * per-lane powers of two would become per-lane shifts, which LLVM
     * scalarizes). */
		const v128_t odd = wasm_i32x4_splat((int32_t)0xffff0000);
		v128_t lo = wasm_v128_bitselect(wasm_u16x8_shr(v, 6), wasm_u16x8_shr(v, 10), odd);
		v128_t hi = wasm_v128_bitselect(wasm_i16x8_shl(v, 8), wasm_i16x8_shl(v, 4), odd);
		v128_t s = wasm_v128_and(wasm_v128_bitselect(hi, lo, wasm_i16x8_splat((int16_t)0xff00)),
			wasm_i8x16_splat(0x3f));
		/* (s - 51 saturated) + (s > 25 ? 1 : 0) */
		v128_t cls = wasm_i8x16_sub(wasm_u8x16_sub_sat(s, wasm_i8x16_splat(51)),
			wasm_u8x16_gt(s, wasm_i8x16_splat(25)));
		wasm_v128_store(w, wasm_i8x16_add(s, wasm_i8x16_swizzle(offset, cls)));
	}
	return i;
}
#else
static size_t encode_blocks(const uint8_t *in, size_t len, char *w)
{
	(void)in, (void)len, (void)w;
	return 0;
}
#endif

int e2bw_base64_encode(e2bw_buf *out, const uint8_t *data, size_t len)
{
	if (e2bw_buf_reserve(out, (len + 2) / 3 * 4) != 0)
		return -1;
	char *w = out->data + out->len;
	size_t i = encode_blocks(data, len, w);
	w += i / 3 * 4;
	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
		*w++ = alphabet[v >> 18];
		*w++ = alphabet[(v >> 12) & 63];
		*w++ = alphabet[(v >> 6) & 63];
		*w++ = alphabet[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0);
		*w++ = alphabet[v >> 18];
		*w++ = alphabet[(v >> 12) & 63];
		*w++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		*w++ = '=';
	}
	out->len = (size_t)(w - out->data);
	out->data[out->len] = '\0';
	return 0;
}

/* 0..63 for the standard and URL-safe alphabets, 64 for anything else. */
static const uint8_t sextets[256] = {
#define X64 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64
	X64,
	X64,
	64,
	64,
	64,
	64,
	64,
	64,
	64,
	64,
	64,
	64,
	64,
	62,
	64,
	62,
	64,
	63, /* + - / */
	52,
	53,
	54,
	55,
	56,
	57,
	58,
	59,
	60,
	61,
	64,
	64,
	64,
	64,
	64,
	64, /* 0-9 */
	64,
	0,
	1,
	2,
	3,
	4,
	5,
	6,
	7,
	8,
	9,
	10,
	11,
	12,
	13,
	14, /* A-O */
	15,
	16,
	17,
	18,
	19,
	20,
	21,
	22,
	23,
	24,
	25,
	64,
	64,
	64,
	64,
	63, /* P-Z _ */
	64,
	26,
	27,
	28,
	29,
	30,
	31,
	32,
	33,
	34,
	35,
	36,
	37,
	38,
	39,
	40, /* a-o */
	41,
	42,
	43,
	44,
	45,
	46,
	47,
	48,
	49,
	50,
	51,
	64,
	64,
	64,
	64,
	64, /* p-z */
	X64,
	X64,
	X64,
	X64,
	X64,
	X64,
	X64,
	X64,
#undef X64
};

#ifdef __wasm_simd128__
/* 16 characters to 12 bytes per step while every character is in the
 * standard alphabet (the nibble-lookup method of Muła and Lemire, "Faster
 * Base64 Encoding and Decoding Using AVX2 Instructions", 2018); stops before
 * the first block holding anything else, which the scalar loop then handles.
 * Each step stores 16 bytes: the caller reserves 4 bytes of slack. Returns
 * the characters consumed (a multiple of 16). */
/* Nonzero lanes where a character is not in the alphabet: its low- and
 * high-nibble classes share a bit. */
static inline __attribute__((always_inline)) v128_t invalid_lanes(v128_t v, v128_t hi)
{
	const v128_t lut_lo = wasm_u8x16_make(0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0x13, 0x1A, 0x1B, 0x1B, 0x1B, 0x1A);
	const v128_t lut_hi = wasm_u8x16_make(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10,
		0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
	return wasm_v128_and(wasm_i8x16_swizzle(lut_lo, wasm_v128_and(v, wasm_i8x16_splat(0x0f))),
		wasm_i8x16_swizzle(lut_hi, hi));
}

/* 16 valid characters to 12 bytes (in lanes 0..11). */
static inline __attribute__((always_inline)) v128_t decode16(v128_t v, v128_t hi)
{
	const v128_t lut_roll = wasm_i8x16_make(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
	/* sextet = character + offset of its range ('/' shares '+'s nibble: one back) */
	v128_t s = wasm_i8x16_add(v,
		wasm_i8x16_swizzle(lut_roll, wasm_i8x16_add(hi, wasm_i8x16_eq(v, wasm_i8x16_splat('/')))));
	/* per 16-bit lane, sextets a b (a lowest) become a<<6 | b; per 32-bit lane,
   * those pairs ab cd become ab<<12 | cd with one multiply-add */
	v128_t ab = wasm_v128_or(wasm_i16x8_shl(wasm_v128_and(s, wasm_i16x8_splat(0x003f)), 6),
		wasm_u16x8_shr(s, 8));
	v128_t abcd = wasm_i32x4_dot_i16x8(ab, wasm_i32x4_splat(0x00011000)); /* (4096, 1) per lane pair */
	return wasm_i8x16_shuffle(abcd, abcd, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 0, 0, 0, 0);
}

static size_t decode_blocks(const uint8_t *in, size_t len, uint8_t *w)
{
	size_t i = 0;
	/* two blocks a step: one branch for both */
	for (; i + 32 <= len; i += 32, w += 24) {
		v128_t v0 = wasm_v128_load(in + i), v1 = wasm_v128_load(in + i + 16);
		v128_t h0 = wasm_u8x16_shr(v0, 4), h1 = wasm_u8x16_shr(v1, 4);
		if (wasm_v128_any_true(wasm_v128_or(invalid_lanes(v0, h0), invalid_lanes(v1, h1))))
			break;
		wasm_v128_store(w, decode16(v0, h0));
		wasm_v128_store(w + 12, decode16(v1, h1));
	}
	for (; i + 16 <= len; i += 16, w += 12) {
		v128_t v = wasm_v128_load(in + i);
		v128_t hi = wasm_u8x16_shr(v, 4);
		if (wasm_v128_any_true(invalid_lanes(v, hi)))
			break;
		wasm_v128_store(w, decode16(v, hi));
	}
	return i;
}
/* How many leading bytes of in[0..len) are standard-alphabet characters,
 * 16 at a time (a multiple of 16; the scalar check decides the rest). */
static size_t valid_blocks(const uint8_t *in, size_t len)
{
	size_t i = 0;
	for (; i + 16 <= len; i += 16) {
		v128_t v = wasm_v128_load(in + i);
		if (wasm_v128_any_true(invalid_lanes(v, wasm_u8x16_shr(v, 4))))
			break;
	}
	return i;
}
#else
static size_t decode_blocks(const uint8_t *in, size_t len, uint8_t *w)
{
	(void)in, (void)len, (void)w;
	return 0;
}

static size_t valid_blocks(const uint8_t *in, size_t len)
{
	(void)in, (void)len;
	return 0;
}
#endif

int e2bw_base64_valid(const char *text, size_t len)
{
	const uint8_t *in = (const uint8_t *)text;
	while (len && in[len - 1] == '=')
		len--; /* as e2bw_base64_decode takes it */
	if (len % 4 == 1)
		return 0;
	for (size_t i = valid_blocks(in, len); i < len; i++)
		if (sextets[in[i]] & 64)
			return 0;
	return 1;
}

int e2bw_base64_decode(e2bw_buf *out, const char *text, size_t len)
{
	const uint8_t *in = (const uint8_t *)text;
	while (len && in[len - 1] == '=')
		len--; /* padding is optional */
	if (len % 4 == 1)
		return -2;
	if (e2bw_buf_reserve(out, len / 4 * 3 + 4) != 0)
		return -1;
	uint8_t *w = (uint8_t *)out->data + out->len;
	size_t i = decode_blocks(in, len, w);
	w += i / 4 * 3;
	/* whole quads: the hot path for process output */
	for (; i + 4 <= len; i += 4) {
		uint32_t a = sextets[in[i]], b = sextets[in[i + 1]], c = sextets[in[i + 2]],
			 d = sextets[in[i + 3]];
		if ((a | b | c | d) & 64)
			return -2;
		uint32_t v = a << 18 | b << 12 | c << 6 | d;
		w[0] = (uint8_t)(v >> 16);
		w[1] = (uint8_t)(v >> 8);
		w[2] = (uint8_t)v;
		w += 3;
	}
	if (i < len) { /* 2 or 3 characters left */
		uint32_t a = sextets[in[i]], b = sextets[in[i + 1]], c = i + 2 < len ? sextets[in[i + 2]] : 0;
		if ((a | b | c) & 64)
			return -2;
		uint32_t v = a << 18 | b << 12 | c << 6;
		*w++ = (uint8_t)(v >> 16);
		if (i + 2 < len)
			*w++ = (uint8_t)(v >> 8);
	}
	out->len = (size_t)((char *)w - out->data);
	out->data[out->len] = '\0';
	return 0;
}

int e2bw_base64_decode_run(e2bw_buf *out, const char *text, size_t len, size_t *used)
{
	const uint8_t *in = (const uint8_t *)text;
	size_t n = 0;
	/* whole quads are decoded straight away; the tail (and padding) below */
	if (e2bw_buf_reserve(out, len / 4 * 3 + 4) != 0)
		return -1;
	uint8_t *w = (uint8_t *)out->data + out->len;
	n = decode_blocks(in, len, w);
	w += n / 4 * 3;
	for (; n + 4 <= len; n += 4) {
		uint32_t a = sextets[in[n]], b = sextets[in[n + 1]], c = sextets[in[n + 2]],
			 d = sextets[in[n + 3]];
		if ((a | b | c | d) & 64)
			break;
		uint32_t v = a << 18 | b << 12 | c << 6 | d;
		w[0] = (uint8_t)(v >> 16);
		w[1] = (uint8_t)(v >> 8);
		w[2] = (uint8_t)v;
		w += 3;
	}
	out->len = (size_t)((char *)w - out->data);
	size_t tail = n;
	while (tail < len && sextets[in[tail]] != 64)
		tail++;
	size_t end = tail;
	while (end < len && in[end] == '=')
		end++;
	*used = end;
	return e2bw_base64_decode(out, text + n, tail - n) == -2 ? -2 : 0;
}
