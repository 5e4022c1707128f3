/* Base64 as protobuf-JSON uses it for `bytes` fields: standard alphabet with
 * padding on output; standard or URL-safe alphabet, padded or not, on input. */
#ifndef E2B_BACKEND_BASE64_H
#define E2B_BACKEND_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters base64_encode writes for n input bytes (no NUL counted). */
size_t base64_encoded_len(size_t n);

/* Writes base64_encoded_len(n) characters to out (no NUL). */
void base64_encode(const uint8_t *in, size_t n, char *out);

/* Decodes len characters into a fresh buffer of *out_len bytes (the caller
 * frees it; a 1-byte buffer for empty input, never NULL on success).
 * 0 on success, -1 on malformed input or out of memory. */
int base64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len);

#endif
