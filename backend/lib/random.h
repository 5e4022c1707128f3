/* Unpredictable identifiers: sandbox IDs, client IDs and envd access tokens. */
#ifndef E2B_BACKEND_RANDOM_ID_H
#define E2B_BACKEND_RANDOM_ID_H

#include <stddef.h>

/* Fills buf from the kernel CSPRNG. 0 on success, -1 on failure. */
int random_bytes(void *buf, size_t len);

/* len characters of [a-z0-9] plus a NUL, written to out (len + 1 bytes).
 * E2B sandbox IDs are lowercase alphanumeric; its proxy validates them. */
int random_lower_alnum(char *out, size_t len);

/* len lowercase hex characters plus a NUL, written to out (len + 1 bytes). */
int random_hex(char *out, size_t len);

#endif
