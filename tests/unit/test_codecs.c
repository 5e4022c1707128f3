/* base64, the Connect envelope decoder and UTF-8-safe JSON text: each
 * decoder gives the same result for every split of its input. */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "envelope.h"
#include "json_text.h"
#include "suites.h"
#include "xorshift.h"

static void test_base64(void)
{
	static const struct {
		const char *plain, *b64;
	} v[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
		{"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		e2bw_buf b = {0};
		e2bw_base64_encode(&b, (const uint8_t *)v[i].plain, strlen(v[i].plain));
		CHECK_STR(b.data ? b.data : "", v[i].b64);
		e2bw_buf_free(&b);
		CHECK(e2bw_base64_decode(&b, v[i].b64, strlen(v[i].b64)) == 0);
		CHECK(b.len == strlen(v[i].plain) && (b.len == 0 || memcmp(b.data, v[i].plain, b.len) == 0));
		e2bw_buf_free(&b);
	}
	e2bw_buf b = {0};
	CHECK(e2bw_base64_decode(&b, "-_8", 3) == 0); /* URL-safe, unpadded */
	CHECK(b.len == 2 && (uint8_t)b.data[0] == 0xfb && (uint8_t)b.data[1] == 0xff);
	e2bw_buf_free(&b);
	CHECK(e2bw_base64_decode(&b, "Zm9v!", 5) == -2);
	CHECK(e2bw_base64_decode(&b, "Z", 1) == -2);
	e2bw_buf_free(&b);
	uint8_t all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	e2bw_buf enc = {0}, dec = {0};
	e2bw_base64_encode(&enc, all, 256);
	e2bw_base64_decode(&dec, enc.data, enc.len);
	CHECK(dec.len == 256 && memcmp(dec.data, all, 256) == 0);
	e2bw_buf_free(&enc);
	e2bw_buf_free(&dec);
}

/* The plain encoder e2bw_base64_encode must match byte for byte (core.wasm
 * encodes whole blocks with SIMD, the rest like this): one group at a time. */
static void reference_encode(char *w, const uint8_t *p, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			(i + 2 < n ? p[i + 2] : 0);
		*w++ = a[v >> 18];
		*w++ = a[(v >> 12) & 63];
		*w++ = i + 1 < n ? a[(v >> 6) & 63] : '=';
		*w++ = i + 2 < n ? a[v & 63] : '=';
	}
	*w = '\0';
}

/* Every length 0..300 at every offset 0..15 of the input (and of the output,
 * through a prefix already in the buffer), over random bytes, all-zero and
 * all-one bytes, and bytes that give every sextet at every position. */
static void test_base64_encode(void)
{
	enum {
		MAX = 300,
		OFFSETS = 16
	};
	static uint8_t data[4][MAX + OFFSETS];
	uint32_t seed = 12345;
	for (size_t i = 0; i < sizeof data[0]; i++) {
		seed = seed * 1103515245u + 12345u;
		data[0][i] = (uint8_t)(seed >> 24);
		data[1][i] = 0;
		data[2][i] = 0xff;
		/* sextets 0, 1, 2, ... 63, 0, ... shifted by one per 64 characters */
		size_t bit = i * 8;
		uint8_t b = 0;
		for (int k = 0; k < 8; k++, bit++)
			b = (uint8_t)(b << 1 | (((bit / 6 + bit / 384) % 64) >> (5 - bit % 6) & 1));
		data[3][i] = b;
	}
	static char want[(MAX + 2) / 3 * 4 + 1];
	int bad = 0;
	for (int d = 0; d < 4; d++) {
		for (size_t off = 0; off < OFFSETS; off++) {
			for (size_t n = 0; n <= MAX; n++) {
				reference_encode(want, data[d] + off, n);
				e2bw_buf b = {0};
				int rc = e2bw_buf_append(&b, "################", off);
				rc |= e2bw_base64_encode(&b, data[d] + off, n);
				size_t len = strlen(want);
				if (rc || b.len != off + len || memcmp(b.data + off, want, len + 1) != 0) {
					if (bad++ < 5)
						fprintf(stderr,
							"  base64 of %zu bytes at offset %zu (data %d): %s\n",
							n, off, d, b.data ? b.data + off : "(null)");
				}
				e2bw_buf_free(&b);
			}
		}
	}
	CHECK(bad == 0);
	/* the reference itself, and the sextet pattern really covers every sextet */
	reference_encode(want, (const uint8_t *)"foob", 4);
	CHECK_STR(want, "Zm9vYg==");
	reference_encode(want, data[3], 48);
	CHECK_STR(want, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
	reference_encode(want, data[3] + 48, 48);
	CHECK_STR(want, "BCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/A");
}

/* Decodes `in` fed in pieces (splits at the given offsets) into a log:
 * "<flags>:<payload>|" per frame, "E<code>" on error. */
static char *decode_log(const uint8_t *in, size_t len, const size_t *splits, int nsplits)
{
	e2bw_env_decoder d;
	e2bw_env_decoder_init(&d);
	e2bw_buf log = {0};
	size_t pos = 0;
	for (int i = 0; i <= nsplits; i++) {
		size_t end = i < nsplits ? splits[i] : len;
		const uint8_t *p = in + pos;
		size_t n = end - pos;
		while (n) {
			size_t used;
			e2bw_env_frame f;
			e2bw_env_status st = e2bw_env_decode(&d, p, n, &used, &f);
			CHECK(used <= n);
			p += used;
			n -= used;
			if (st == E2BW_ENV_FRAME) {
				char head[8];
				snprintf(head, sizeof head, "%d:", f.flags);
				e2bw_buf_append_str(&log, head);
				e2bw_buf_append(&log, f.data, f.len);
				e2bw_buf_append_char(&log, '|');
			} else if (st < 0) {
				char err[16];
				snprintf(err, sizeof err, "E%d", -st);
				e2bw_buf_append_str(&log, err);
				goto done;
			} else {
				CHECK(n == 0); /* NEED_MORE consumes everything */
			}
		}
		pos = end;
	}
	if (!e2bw_env_decoder_at_boundary(&d))
		e2bw_buf_append_str(&log, "PARTIAL");
done:
	e2bw_env_decoder_free(&d);
	e2bw_buf_append_char(&log, 0);
	return log.data;
}

static void check_env_chunkings(const uint8_t *in, size_t len, const char *expected)
{
	char *whole = decode_log(in, len, NULL, 0);
	CHECK_STR(whole, expected);
	free(whole);
	size_t *every = malloc((len + 1) * sizeof *every);
	for (size_t i = 0; i < len; i++)
		every[i] = i;
	char *bytes = decode_log(in, len, every, (int)len);
	CHECK_STR(bytes, expected);
	free(bytes);
	for (size_t s = 0; s <= len; s++)
		for (size_t t = s; t <= len; t += 3) {
			size_t two[2] = {s, t};
			char *got = decode_log(in, len, two, 2);
			CHECK_STR(got, expected);
			free(got);
		}
	free(every);
}

static void test_envelope(void)
{
	e2bw_buf stream = {0};
	e2bw_env_encode(&stream, 0, "{\"a\":1}", 7);
	e2bw_env_encode(&stream, 0, "", 0);
	e2bw_env_encode(&stream, 0, "{\"event\":{\"keepalive\":{}}}", 26);
	e2bw_env_encode(&stream, E2BW_ENV_FLAG_END_STREAM, "{}", 2);
	CHECK(memcmp(stream.data, "\x00\x00\x00\x00\x07", 5) == 0);
	check_env_chunkings((const uint8_t *)stream.data, stream.len,
		"0:{\"a\":1}|0:|0:{\"event\":{\"keepalive\":{}}}|2:{}|");
	/* a stream cut mid-frame is detectably unfinished */
	check_env_chunkings((const uint8_t *)stream.data, stream.len - 1,
		"0:{\"a\":1}|0:|0:{\"event\":{\"keepalive\":{}}}|PARTIAL");
	check_env_chunkings((const uint8_t *)stream.data, 3, "PARTIAL");
	e2bw_buf_free(&stream);

	/* compressed, unknown flags, oversized: refused, and the error sticks */
	e2bw_env_encode(&stream, 0, "ok", 2);
	e2bw_env_encode(&stream, E2BW_ENV_FLAG_COMPRESSED, "zz", 2);
	e2bw_env_encode(&stream, 0, "never", 5);
	check_env_chunkings((const uint8_t *)stream.data, stream.len, "0:ok|E1");
	e2bw_buf_free(&stream);
	e2bw_env_encode(&stream, 0x80, "x", 1);
	check_env_chunkings((const uint8_t *)stream.data, stream.len, "E3");
	e2bw_buf_free(&stream);
	const uint8_t huge[] = {0, 0x7f, 0xff, 0xff, 0xff, 'x'};
	check_env_chunkings(huge, sizeof huge, "E2"); /* refused before buffering 2 GiB */

	/* a big payload across many feeds */
	size_t big = 100000;
	char *payload = malloc(big);
	for (size_t i = 0; i < big; i++)
		payload[i] = (char)('a' + i % 26);
	e2bw_env_encode(&stream, 0, payload, big);
	e2bw_env_decoder d;
	e2bw_env_decoder_init(&d);
	size_t got = 0;
	for (size_t off = 0; off < stream.len; off += 777) {
		size_t n = stream.len - off < 777 ? stream.len - off : 777, used;
		e2bw_env_frame f;
		if (e2bw_env_decode(&d, (const uint8_t *)stream.data + off, n, &used, &f) == E2BW_ENV_FRAME) {
			CHECK(f.len == big && memcmp(f.data, payload, big) == 0);
			got++;
		}
	}
	CHECK(got == 1);
	CHECK(d.offset == stream.len);
	e2bw_env_decoder_free(&d);
	e2bw_buf_free(&stream);
	free(payload);
}

static char *text_log(const uint8_t *in, size_t len, const size_t *splits, int nsplits)
{
	e2bw_buf out = {0};
	e2bw_utf8_carry carry = {{0}, 0};
	size_t pos = 0;
	for (int i = 0; i <= nsplits; i++) {
		size_t end = i < nsplits ? splits[i] : len;
		e2bw_json_text(&out, &carry, in + pos, end - pos, i == nsplits);
		pos = end;
	}
	e2bw_buf_append_char(&out, 0);
	return out.data;
}

static void check_text(const char *in, size_t len, const char *expected)
{
	char *whole = text_log((const uint8_t *)in, len, NULL, 0);
	CHECK_STR(whole, expected);
	free(whole);
	for (size_t s = 0; s <= len; s++)
		for (size_t t = s; t <= len; t++) {
			size_t two[2] = {s, t};
			char *got = text_log((const uint8_t *)in, len, two, 2);
			CHECK_STR(got, expected);
			free(got);
		}
}

static void test_json_text(void)
{
	check_text("plain", 5, "plain");
	check_text("q\"b\\n\n\t\x01", 8, "q\\\"b\\\\n\\n\\t\\u0001");
	check_text("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
		"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); /* é € 😀 */
	check_text("a\xff"
		   "b",
		3,
		"a\xEF\xBF\xBD"
		"b");                                                          /* invalid byte */
	check_text("\xe2\x82", 2, "\xEF\xBF\xBD\xEF\xBF\xBD");                 /* cut at the very end */
	check_text("\xe2\x82x", 3, "\xEF\xBF\xBD\xEF\xBF\xBDx");               /* cut by an ASCII byte */
	check_text("\xc0\xaf", 2, "\xEF\xBF\xBD\xEF\xBF\xBD");                 /* overlong */
	check_text("\xed\xa0\x80", 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* surrogate */
	check_text("\xf4\x90\x80\x80", 4,
		"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); /* > U+10FFFF */
	check_text("\xf0\x9f\x98\x80\xf0\x9f", 6, "\xf0\x9f\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD");
	e2bw_buf q = {0};
	e2bw_json_quoted(&q, "a\"b", 3);
	CHECK_STR(q.data, "\"a\\\"b\"");
	e2bw_buf_free(&q);
}

/* The parameter check's validator says yes exactly when the decoder
 * decodes: random texts over the alphabet, both URL-safe characters, '='
 * and a few others, at every length 0..80 (padding anywhere, lengths of
 * every remainder), and long valid runs broken at every position. */
static void test_base64_valid(void)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_= \n*";
	uint64_t seed = 0x51ed270b2c9a4e17ull;
	char text[128];
	for (int round = 0; round < 30000; round++) {
		size_t len = (size_t)(round % 81);
		uint64_t odd = xorshift64(&seed) % 4; /* 0: valid characters only; else a few strays */
		for (size_t i = 0; i < len; i++) {
			uint64_t r = xorshift64(&seed);
			text[i] = chars[odd && r % 23 == 0 ? 62 + (r >> 8) % 7 : (r >> 8) % 64];
		}
		if (round % 5 == 0 && len)
			text[len - 1] = '='; /* padding, wherever the length leaves it */
		e2bw_buf out = {0};
		int decodes = e2bw_base64_decode(&out, text, len) == 0;
		e2bw_buf_free(&out);
		CHECK_NUM(e2bw_base64_valid(text, len), decodes);
	}
	char run[100];
	for (size_t at = 0; at < sizeof run; at++) {
		memset(run, 'Q', sizeof run);
		run[at] = '*';
		CHECK_NUM(e2bw_base64_valid(run, sizeof run), 0);
		run[at] = '=';
		CHECK_NUM(e2bw_base64_valid(run, sizeof run),
			at + 1 == sizeof run); /* padding only at the end */
	}
}

void suite_codecs(void)
{
	test_base64_valid();
	test_base64();
	test_base64_encode();
	test_envelope();
	test_json_text();
}
