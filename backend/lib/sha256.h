/* SHA-256 (FIPS 180-4), for envd's v1_ file URL signatures. */
#ifndef E2B_BACKEND_SHA256_H
#define E2B_BACKEND_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_LEN 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_DIGEST_LEN]);

#endif
