#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int e2bw_base64_encode(e2bw_buf *out, const uint8_t *data, size_t len) {
  if (e2bw_buf_reserve(out, (len + 2) / 3 * 4) != 0) return -1;
  char *w = out->data + out->len;
  size_t i = 0;
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
    X64, X64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 62, 64, 62, 64, 63,            /* + - / */
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 64, 64, 64, 64, 64, 64,            /* 0-9 */
    64, 0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,            /* A-O */
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 64, 64, 64, 64, 63,            /* P-Z _ */
    64, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,            /* a-o */
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 64, 64, 64, 64, 64,            /* p-z */
    X64, X64, X64, X64, X64, X64, X64, X64,
#undef X64
};

int e2bw_base64_decode(e2bw_buf *out, const char *text, size_t len) {
  const uint8_t *in = (const uint8_t *)text;
  while (len && in[len - 1] == '=') len--; /* padding is optional */
  if (len % 4 == 1) return -2;
  if (e2bw_buf_reserve(out, len / 4 * 3 + 2) != 0) return -1;
  uint8_t *w = (uint8_t *)out->data + out->len;
  size_t i = 0;
  /* whole quads: the hot path for process output */
  for (; i + 4 <= len; i += 4) {
    uint32_t a = sextets[in[i]], b = sextets[in[i + 1]], c = sextets[in[i + 2]], d = sextets[in[i + 3]];
    if ((a | b | c | d) & 64) return -2;
    uint32_t v = a << 18 | b << 12 | c << 6 | d;
    w[0] = (uint8_t)(v >> 16);
    w[1] = (uint8_t)(v >> 8);
    w[2] = (uint8_t)v;
    w += 3;
  }
  if (i < len) { /* 2 or 3 characters left */
    uint32_t a = sextets[in[i]], b = sextets[in[i + 1]], c = i + 2 < len ? sextets[in[i + 2]] : 0;
    if ((a | b | c) & 64) return -2;
    uint32_t v = a << 18 | b << 12 | c << 6;
    *w++ = (uint8_t)(v >> 16);
    if (i + 2 < len) *w++ = (uint8_t)(v >> 8);
  }
  out->len = (size_t)((char *)w - out->data);
  out->data[out->len] = '\0';
  return 0;
}

int e2bw_base64_decode_run(e2bw_buf *out, const char *text, size_t len, size_t *used) {
  const uint8_t *in = (const uint8_t *)text;
  size_t n = 0;
  /* whole quads are decoded straight away; the tail (and padding) below */
  if (e2bw_buf_reserve(out, len / 4 * 3 + 3) != 0) return -1;
  uint8_t *w = (uint8_t *)out->data + out->len;
  for (; n + 4 <= len; n += 4) {
    uint32_t a = sextets[in[n]], b = sextets[in[n + 1]], c = sextets[in[n + 2]], d = sextets[in[n + 3]];
    if ((a | b | c | d) & 64) break;
    uint32_t v = a << 18 | b << 12 | c << 6 | d;
    w[0] = (uint8_t)(v >> 16);
    w[1] = (uint8_t)(v >> 8);
    w[2] = (uint8_t)v;
    w += 3;
  }
  out->len = (size_t)((char *)w - out->data);
  size_t tail = n;
  while (tail < len && sextets[in[tail]] != 64) tail++;
  size_t end = tail;
  while (end < len && in[end] == '=') end++;
  *used = end;
  return e2bw_base64_decode(out, text + n, tail - n) == -2 ? -2 : 0;
}
