/* base64.h — RFC 4648 base64: protobuf-JSON bytes fields (envd data). */
#ifndef E2BW_BASE64_H
#define E2BW_BASE64_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends the standard, padded encoding. 0, or -1 when out of memory. */
int e2bw_base64_encode(e2bw_buf *out, const uint8_t *data, size_t len);
/* Appends the decoded bytes. Accepts the standard and URL-safe alphabets,
 * with or without padding (protobuf-JSON accepts both). Returns 0, -1 when
 * out of memory, -2 when the text is not base64. */
int e2bw_base64_decode(e2bw_buf *out, const char *text, size_t len);
/* 1 when e2bw_base64_decode would accept text, without decoding it (no
 * memory: a parameter check of 16 MiB of content). */
int e2bw_base64_valid(const char *text, size_t len);
/* Decodes the base64 run at the start of text (up to the first character
 * that is neither in the alphabet nor '='); *used tells its length. For
 * reading a JSON string's base64 without finding its end first. */
int e2bw_base64_decode_run(e2bw_buf *out, const char *text, size_t len, size_t *used);

#endif
