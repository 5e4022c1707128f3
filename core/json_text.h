/* json_text.h — writing JSON string contents straight from raw bytes, for
 * process output: invalid UTF-8 becomes U+FFFD, and a multi-byte sequence
 * cut at the end of a chunk is held back and finished with the next chunk,
 * so text split anywhere decodes the same. */
#ifndef E2BW_JSON_TEXT_H
#define E2BW_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct e2bw_utf8_carry {
	uint8_t bytes[4];
	uint8_t len;
} e2bw_utf8_carry;

/* Appends the escaped contents (no quotes) of p[0..n) preceded by what carry
 * holds. Unless final, an incomplete sequence at the end stays in carry.
 * Returns 0, or -1 when out of memory. carry may be NULL (then final). */
int e2bw_json_text(e2bw_buf *out, e2bw_utf8_carry *carry, const uint8_t *p, size_t n, int final);

/* The same without escaping: raw UTF-8 made valid the same way, for a
 * string the host receives detached from its message (e2bw.h). */
int e2bw_utf8_text(e2bw_buf *out, e2bw_utf8_carry *carry, const uint8_t *p, size_t n, int final);

/* 1 when every byte of p[0..n) is ASCII. */
int e2bw_is_ascii(const uint8_t *p, size_t n);

/* Appends a quoted JSON string of already valid text (escaping only). */
int e2bw_json_quoted(e2bw_buf *out, const char *s, size_t n);

/* 1 when a JSON string in text holds a \u0000 escape. cJSON ends strings at
 * the first NUL, so such a value (a path, file content) would be silently
 * cut: requests carrying one are refused instead. */
int e2bw_json_has_nul(const char *text, size_t len);

#endif
