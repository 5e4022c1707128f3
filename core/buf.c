#include "buf.h"

#include <stdlib.h>
#include <string.h>

int e2bw_buf_reserve(e2bw_buf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len - 1)
		return -1;
	size_t need = b->len + extra + 1; /* +1 keeps room for the trailing NUL */
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int e2bw_buf_append(e2bw_buf *b, const void *data, size_t len)
{
	if (e2bw_buf_reserve(b, len) != 0)
		return -1;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int e2bw_buf_append_str(e2bw_buf *b, const char *s)
{
	return e2bw_buf_append(b, s, strlen(s));
}

int e2bw_buf_append_char(e2bw_buf *b, char c)
{
	return e2bw_buf_append(b, &c, 1);
}

void e2bw_buf_reset(e2bw_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void e2bw_buf_free(e2bw_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *e2bw_buf_take(e2bw_buf *b, size_t *len)
{
	char *p = b->data;
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
