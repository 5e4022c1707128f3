/* buf.h — a growable byte buffer. Binary-safe; always keeps a NUL after the
 * data so text can go to libc and cJSON without a copy. */
#ifndef E2BW_BUF_H
#define E2BW_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct e2bw_buf {
	char *data; /* NULL until the first append */
	size_t len;
	size_t cap;
} e2bw_buf;

/* All return 0, or -1 when out of memory (the buffer is then unchanged). */
int e2bw_buf_reserve(e2bw_buf *b, size_t extra);
int e2bw_buf_append(e2bw_buf *b, const void *data, size_t len);
int e2bw_buf_append_str(e2bw_buf *b, const char *s);
int e2bw_buf_append_char(e2bw_buf *b, char c);
void e2bw_buf_reset(e2bw_buf *b); /* len = 0, keeps the memory */
void e2bw_buf_free(e2bw_buf *b);  /* back to the zero state */
/* Hands the bytes over (NUL-terminated) and leaves b empty; NULL if empty. */
char *e2bw_buf_take(e2bw_buf *b, size_t *len);

#endif
