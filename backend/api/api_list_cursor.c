/* Encoding and decoding list page tokens. */
#include "api/api_list_cursor.h"

#include "lib/clock.h"
#include "lib/text.h"

#include <stdlib.h>
#include <string.h>

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *base64url_encode(const unsigned char *in, size_t len)
{
	char *out = malloc((len + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[n++] = b64url[(v >> 18) & 63];
		out[n++] = b64url[(v >> 12) & 63];
		out[n++] = i + 1 < len ? b64url[(v >> 6) & 63] : '=';
		out[n++] = i + 2 < len ? b64url[v & 63] : '=';
	}
	out[n] = '\0';
	return out;
}

/* Decodes into out (capacity cap); padding optional. Returns the length or -1. */
static long base64url_decode(const char *in, unsigned char *out, size_t cap)
{
	size_t len = strlen(in);
	while (len > 0 && in[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -1;
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0;
	for (size_t i = 0; i < len; i++) {
		const char *pos = in[i] ? strchr(b64url, in[i]) : NULL;
		if (!pos)
			return -1;
		acc = (acc << 6) | (unsigned)(pos - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n >= cap)
				return -1;
			out[n++] = (unsigned char)((acc >> bits) & 0xff);
		}
	}
	return (long)n;
}

char *list_cursor_encode(const struct list_cursor *c)
{
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(c->started_at_ms, when);
	char *plain = text_printf("%s__%s%s", when, c->id, c->ascending ? "__asc" : "");
	if (!plain)
		return NULL;
	char *token = base64url_encode((const unsigned char *)plain, strlen(plain));
	free(plain);
	return token;
}

int list_cursor_decode(const char *token, struct list_cursor *c)
{
	unsigned char plain[160];
	long n = base64url_decode(token, plain, sizeof plain - 1);
	if (n <= 0)
		return -1;
	plain[n] = '\0';
	if (memchr(plain, '\0', (size_t)n))
		return -1;

	char *text = (char *)plain;
	char *sep = strstr(text, "__");
	if (!sep)
		return -1;
	*sep = '\0';
	char *id = sep + 2;
	char *dir = strstr(id, "__");
	c->ascending = false;
	if (dir) {
		if (strcmp(dir, "__asc") != 0)
			return -1;
		*dir = '\0';
		c->ascending = true;
	}
	/* IDs are lower-case alphanumerics; a secret's has one inner '_'
	 * ("sec_..."). A trailing '_' would run into the "__asc" above. */
	size_t idlen = strlen(id);
	if (idlen == 0 || idlen > LIST_CURSOR_ID_MAX ||
		strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789_") != idlen || id[0] == '_' ||
		id[idlen - 1] == '_')
		return -1;
	if (clock_parse_rfc3339(text, &c->started_at_ms) != 0)
		return -1;
	memcpy(c->id, id, idlen + 1);
	return 0;
}

int list_cursor_limit(const char *text, long *out)
{
	if (!text)
		return 0;
	/* Digits only: strtol alone would take " 5" and "+5". */
	char *end = NULL;
	long v = strtol(text, &end, 10);
	if (!(*text >= '0' && *text <= '9') || *end || v < 1 || v > LIST_LIMIT_MAX)
		return -1;
	*out = v;
	return 0;
}
