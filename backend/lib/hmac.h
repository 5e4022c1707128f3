/* HMAC-SHA256 (RFC 2104): tokens derived from the API key instead of being
 * stored (volume content tokens, the envd tokens of sandboxes kept across a
 * restart). */
#ifndef E2B_BACKEND_HMAC_H
#define E2B_BACKEND_HMAC_H

#include <stddef.h>

#define HMAC_MAX_MESSAGE 256

/* Lowercase hex of HMAC-SHA256(key, message): 64 characters and a NUL in
 * out. -1 for a message longer than HMAC_MAX_MESSAGE. */
int hmac_sha256_hex(const char *key, const char *message, char out[65]);

#endif
