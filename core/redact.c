/* redact.c — see redact.h. The check runs on every outgoing message, output
 * chunks included, so the common case (nothing matches) is one pass with a
 * bit test per byte and no allocation; the rewrite only runs on a hit. */
#include "redact.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cJSON.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define RUN 8 /* any run of this many characters of a secret is redacted */

static uint64_t mix(uint64_t g)
{
	return g * 0x9E3779B97F4A7C15ull;
}

static int gram_known(const e2bw_secrets *s, const char *p)
{
	uint64_t g, h;
	memcpy(&g, p, RUN);
	h = mix(g);
	unsigned f = (unsigned)(h >> 48);
	if (!(s->filter[f >> 3] & (1u << (f & 7))))
		return 0;
	size_t mask = s->gcap - 1;
	for (size_t i = (size_t)(h >> 16) & mask; s->grams[i]; i = (i + 1) & mask)
		if (s->grams[i] == g)
			return 1;
	return 0;
}

static void gram_put(uint64_t *grams, size_t cap, uint64_t g)
{
	size_t mask = cap - 1;
	size_t i = (size_t)(mix(g) >> 16) & mask;
	while (grams[i] && grams[i] != g)
		i = (i + 1) & mask;
	grams[i] = g;
}

static int grams_add(e2bw_secrets *s, const char *t)
{
	size_t n = strlen(t);
	for (size_t i = 0; n >= RUN && i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c >= 0x80)
			s->wide = 1;
		else
			s->class_lo[c & 15] |= (uint8_t)(1u << (c >> 4));
	}
	for (size_t i = 0; i + RUN <= n; i++) {
		if ((s->ngrams + 1) * 2 > s->gcap) { /* keep the table at most half full */
			size_t cap = s->gcap ? s->gcap * 2 : 128;
			uint64_t *grams = calloc(cap, sizeof *grams);
			if (!grams)
				return -1;
			for (size_t k = 0; k < s->gcap; k++)
				if (s->grams[k])
					gram_put(grams, cap, s->grams[k]);
			free(s->grams);
			s->grams = grams;
			s->gcap = cap;
		}
		uint64_t g;
		memcpy(&g, t + i, RUN);
		unsigned f = (unsigned)(mix(g) >> 48);
		s->filter[f >> 3] |= (uint8_t)(1u << (f & 7));
		gram_put(s->grams, s->gcap, g);
		s->ngrams++; /* an upper bound: duplicates only make the table grow early */
	}
	return 0;
}

static char *escaped(const char *raw)
{
	cJSON *item = cJSON_CreateString(raw);
	char *json = item ? cJSON_PrintUnformatted(item) : NULL;
	cJSON_Delete(item);
	if (!json)
		return NULL;
	size_t n = strlen(json);
	memmove(json, json + 1, n - 2); /* drop the quotes */
	json[n - 2] = '\0';
	return json;
}

int e2bw_secrets_add(e2bw_secrets *s, const char *secret, int is_token)
{
	if (!secret || strlen(secret) < 4)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->list[i].raw, secret) == 0)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4;
		e2bw_secret *list = realloc(s->list, cap * sizeof *list);
		if (!list)
			return -1;
		s->list = list;
		s->cap = cap;
	}
	e2bw_secret *e = &s->list[s->n];
	e->raw = malloc(strlen(secret) + 1);
	e->text = escaped(secret);
	e->is_token = is_token;
	if (!e->raw || !e->text) {
		free(e->raw);
		free(e->text);
		return -1;
	}
	strcpy(e->raw, secret);
	s->n++;
	return grams_add(s, e->raw) || grams_add(s, e->text) ? -1 : 0;
}

void e2bw_secrets_free(e2bw_secrets *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->list[i].raw);
		free(s->list[i].text);
	}
	free(s->list);
	free(s->grams);
	memset(s, 0, sizeof *s);
}

/* Bit i set when byte p[i] is one secrets are made of. */
static inline __attribute__((always_inline)) unsigned class_mask16(const e2bw_secrets *s, const uint8_t *p)
{
	if (s->wide)
		return 0xFFFF; /* a secret with non-ASCII bytes: every byte may start a run */
#ifdef __wasm_simd128__
	static const uint8_t class_hi[16] = {1, 2, 4, 8, 16, 32, 64, 128}; /* bit c >> 4; none from 0x80 on */
	v128_t v = wasm_v128_load(p);
	v128_t lo = wasm_i8x16_swizzle(wasm_v128_load(s->class_lo), wasm_v128_and(v, wasm_i8x16_splat(15)));
	v128_t hi = wasm_i8x16_swizzle(wasm_v128_load(class_hi), wasm_u8x16_shr(v, 4));
	return (unsigned)wasm_i8x16_bitmask(wasm_i8x16_ne(wasm_v128_and(lo, hi), wasm_i8x16_splat(0)));
#else
	unsigned bits = 0;
	for (int i = 0; i < 16; i++)
		bits |= (unsigned)(p[i] < 0x80 && (s->class_lo[p[i] & 15] >> (p[i] >> 4) & 1)) << i;
	return bits;
#endif
}

static uint64_t class_mask64(const e2bw_secrets *s, const uint8_t *p)
{
	return (uint64_t)class_mask16(s, p) | (uint64_t)class_mask16(s, p + 16) << 16 |
		(uint64_t)class_mask16(s, p + 32) << 32 | (uint64_t)class_mask16(s, p + 48) << 48;
}

/* Bit k of starts: an 8-byte run starts at base + k; 1 when one is a secret's. */
static int known_at(const e2bw_secrets *s, const char *base, uint64_t starts)
{
	for (; starts; starts &= starts - 1)
		if (gram_known(s, base + __builtin_ctzll(starts)))
			return 1;
	return 0;
}

/* Detection, the hot path (every outgoing message): a run of a secret is
 * RUN bytes secrets are made of, so only where such a run starts is the
 * 8-byte run looked up. 64 bytes a step: runs inside the word, and runs
 * from the previous word's last 7 bytes into this one. */
static int detect_runs(const e2bw_secrets *s, const char *t, size_t len)
{
	uint64_t prev = 0;
	size_t i = 0;
	for (; i + 64 <= len; i += 64) {
		uint64_t m = class_mask64(s, (const uint8_t *)t + i), across = (prev >> 57) | (m << 7),
			 inside = m;
		across &= across >> 1, inside &= inside >> 1;
		across &= across >> 2, inside &= inside >> 2;
		across &= across >> 4, inside &= inside >> 4;
		if (i && known_at(s, t + i - 7, across & 0x7F))
			return 1;
		if (known_at(s, t + i, inside))
			return 1;
		prev = m;
	}
	for (size_t j = i >= 7 ? i - 7 : 0; j + RUN <= len;
		j++) /* the last word's last starts, and the tail */
		if (gram_known(s, t + j))
			return 1;
	return 0;
}

/* Marks (m != NULL) or only detects every run of a secret in t. Secrets
 * shorter than RUN match whole. Returns 1 on any hit. */
static int scan(const e2bw_secrets *s, const char *t, size_t len, uint8_t *m)
{
	int hit = 0;
	if (!m && s->ngrams) {
		if (detect_runs(s, t, len))
			return 1;
	} else if (s->ngrams)
		for (size_t i = 0; i + RUN <= len; i++)
			if (gram_known(s, t + i)) {
				if (!m)
					return 1;
				hit = 1;
				memset(m + i, 1, RUN);
			}
	for (size_t k = 0; k < s->n; k++)
		for (int form = 0; form < 2; form++) {
			const char *sec = form ? s->list[k].text : s->list[k].raw;
			size_t n = strlen(sec);
			if (n >= RUN)
				continue;
			for (size_t i = 0; i + n <= len; i++)
				if (t[i] == sec[0] && memcmp(t + i, sec, n) == 0) {
					if (!m)
						return 1;
					hit = 1;
					memset(m + i, 1, n);
				}
		}
	return hit;
}

/* Length of the character at t (a UTF-8 sequence is never split). Only real
 * continuation bytes belong to it: a stray lead byte must not swallow the
 * quote or backslash after it, or the string state would go out of step. */
static size_t char_len(const char *t, size_t left)
{
	unsigned c = (unsigned char)t[0];
	size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1, k = 1;
	while (k < n && k < left && ((unsigned char)t[k] & 0xC0) == 0x80)
		k++;
	return k;
}

/* Is the string literal whose contents start at t exactly a known token of that kind? */
static int is_known_token(const e2bw_secrets *s, const char *t, size_t left, int kind)
{
	for (size_t k = 0; k < s->n; k++) {
		size_t n = strlen(s->list[k].text);
		if (s->list[k].is_token == kind && n < left && memcmp(t, s->list[k].text, n) == 0 &&
			t[n] == '"')
			return 1;
	}
	return 0;
}

/* Which token may be the value of the member named by the key t[0..n). */
static int token_kind_of_key(const char *t, size_t n)
{
	static const char envd[] = "envd_access_token", traffic[] = "e2b-traffic-access-token";
	if (n == sizeof envd - 1 && memcmp(t, envd, n) == 0)
		return E2BW_SECRET_ENVD_TOKEN;
	if (n == sizeof traffic - 1 && memcmp(t, traffic, n) == 0)
		return E2BW_SECRET_TRAFFIC_TOKEN;
	return 0;
}

/* Copies t to out with every marked character (JSON: every marked escape or
 * character inside a string) replaced, one "***" per run. */
static int rewrite(const e2bw_secrets *s, const char *t, size_t len, const uint8_t *m, int json,
	int allow_tokens, e2bw_buf *out)
{
	int in_str = !json, run = 0, keep = 0, after_key = 0, rc = 0;
	size_t str_start = 0, last_start = 0, last_len = 0;
	for (size_t i = 0; i < len;) {
		char c = t[i];
		if (json && !in_str) {
			if (c == '"') {
				in_str = 1;
				str_start = i + 1;
				keep = after_key &&
					(allow_tokens || after_key == E2BW_SECRET_TRAFFIC_TOKEN) &&
					is_known_token(s, t + i + 1, len - i - 1, after_key);
			}
			if (c == ':')
				after_key = token_kind_of_key(t + last_start, last_len);
			else if (c != ' ')
				after_key = 0;
			rc |= e2bw_buf_append_char(out, c);
			run = 0;
			i++;
			continue;
		}
		if (json && c == '"') {
			in_str = 0;
			last_start = str_start;
			last_len = i - str_start;
			rc |= e2bw_buf_append_char(out, c);
			run = 0;
			i++;
			continue;
		}
		size_t n = json && c == '\\' ? (i + 1 < len && t[i + 1] == 'u' ? 6 : 2)
					     : char_len(t + i, len - i);
		if (n > len - i)
			n = len - i;
		int marked = 0;
		for (size_t k = 0; k < n && !keep; k++)
			marked |= m[i + k];
		if (marked) {
			if (!run)
				rc |= e2bw_buf_append_str(out, "***");
			run = 1;
		} else {
			rc |= e2bw_buf_append(out, t + i, n);
			run = 0;
		}
		i += n;
	}
	return rc;
}

static char *redact(const e2bw_secrets *s, const char *t, size_t *len, int json, int allow_tokens)
{
	uint8_t *m = calloc(*len + 1, 1);
	e2bw_buf out = {0};
	char *result = NULL;
	if (m) {
		scan(s, t, *len, m);
		if (rewrite(s, t, *len, m, json, allow_tokens, &out) == 0 &&
			e2bw_buf_append(&out, "", 0) == 0)
			result = e2bw_buf_take(&out, len);
	}
	free(m);
	e2bw_buf_free(&out);
	return result;
}

static char *redact_in_place(const e2bw_secrets *s, char *text, size_t *len, int json, int allow_tokens)
{
	if (!s->n || !scan(s, text, *len, NULL))
		return text;
	char *clean = redact(s, text, len, json, allow_tokens);
	free(text);
	return clean;
}

char *e2bw_redact_json(const e2bw_secrets *s, char *text, size_t *len, int allow_tokens)
{
	return redact_in_place(s, text, len, 1, allow_tokens);
}

char *e2bw_redact_bytes(const e2bw_secrets *s, char *text, size_t *len)
{
	return redact_in_place(s, text, len, 0, 0);
}

char *e2bw_redact_raw(const e2bw_secrets *s, const char *str)
{
	size_t len = strlen(str);
	if (!s->n || !scan(s, str, len, NULL)) {
		char *copy = malloc(len + 1);
		if (copy)
			memcpy(copy, str, len + 1);
		return copy;
	}
	return redact(s, str, &len, 0, 0);
}
