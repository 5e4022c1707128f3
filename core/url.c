#include "url.h"

#include <string.h>

static int unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		c == '.' || c == '_' || c == '~';
}

int e2bw_url_encode(e2bw_buf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	if (e2bw_buf_reserve(out, len * 3) != 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (unreserved(c)) {
			out->data[out->len++] = (char)c;
		} else {
			out->data[out->len++] = '%';
			out->data[out->len++] = hex[c >> 4];
			out->data[out->len++] = hex[c & 15];
		}
	}
	out->data[out->len] = '\0';
	return 0;
}

int e2bw_url_encode_str(e2bw_buf *out, const char *s)
{
	return e2bw_url_encode(out, s, strlen(s));
}
