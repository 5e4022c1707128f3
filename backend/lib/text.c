/* Small string helpers the C library lacks. */
#include "lib/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *text_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *out = malloc((size_t)n + 1);
	if (!out)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(out, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return out;
}

bool text_secret_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* Walk the expected secret's full length whatever the input is. */
	unsigned char diff = (unsigned char)(la != lb);
	for (size_t i = 0; i < lb; i++) {
		unsigned char ca = i < la ? (unsigned char)a[i] : 0;
		diff |= (unsigned char)(ca ^ (unsigned char)b[i]);
	}
	return diff == 0;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0 when it is not one. */
static size_t utf8_sequence(const unsigned char *p, size_t left)
{
	if (p[0] < 0x80)
		return 1;
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;
		else if (p[0] == 0xed)
			hi = 0x9f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		if (p[0] == 0xf0)
			lo = 0x90;
		else if (p[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

bool text_utf8_valid(const char *text, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

char *text_utf8_replace_invalid(const char *text, size_t len, size_t *out_len)
{
	static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */
	char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	const unsigned char *p = (const unsigned char *)text;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_sequence(p + i, len - i);
		if (n) {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
			i++; /* one byte at a time, as Go's utf8.DecodeRune does */
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

bool text_json_has_nul_escape(const char *text, size_t len)
{
	bool in_string = false;
	for (size_t i = 0; i < len; i++) {
		if (!in_string) {
			in_string = text[i] == '"';
			continue;
		}
		if (text[i] == '"') {
			in_string = false;
		} else if (text[i] == '\\' && i + 1 < len) {
			if (text[i + 1] == 'u' && i + 5 < len && memcmp(text + i + 2, "0000", 4) == 0)
				return true;
			i++; /* skip the escaped character, so \\u0000 is text, not NUL */
		} else if (text[i] == '\0') {
			return true; /* a raw NUL byte inside a string */
		}
	}
	return false;
}
