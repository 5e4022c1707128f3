/* Base64 encoding and lenient decoding (protobuf-JSON `bytes`). */
#include "lib/base64.h"

#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

void base64_encode(const uint8_t *in, size_t n, char *out)
{
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = '=';
		*out++ = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = '=';
	}
}

/* The 6-bit value of c in either alphabet, or -1. */
static int sextet(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int base64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len)
{
	/* Padding is optional, but when present it must complete the quantum. */
	size_t pad = 0;
	while (len > 0 && in[len - 1] == '=' && pad < 2) {
		len--;
		pad++;
	}
	if (pad && (len + pad) % 4 != 0)
		return -1;
	if (len % 4 == 1)
		return -1;
	uint8_t *buf = malloc(len / 4 * 3 + 3);
	if (!buf)
		return -1;
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < len; i++) {
		int v = sextet(in[i]);
		if (v < 0) {
			free(buf);
			return -1;
		}
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[n++] = (uint8_t)(acc >> bits);
		}
	}
	*out = buf;
	*out_len = n;
	return 0;
}
