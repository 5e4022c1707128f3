/* sha256.h — SHA-256 (FIPS 180-4), for envd's `v1_` file-URL signatures.
 * Small and dependency-free; not constant-time (it hashes no secret that an
 * attacker can time: the signature is computed once, client-side). */
#ifndef E2BW_SHA256_H
#define E2BW_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct e2bw_sha256 {
	uint32_t h[8];
	uint64_t total; /* bytes hashed so far */
	uint8_t block[64];
	size_t fill; /* bytes of block[] in use */
} e2bw_sha256;

void e2bw_sha256_init(e2bw_sha256 *s);
void e2bw_sha256_update(e2bw_sha256 *s, const void *data, size_t len);
void e2bw_sha256_final(e2bw_sha256 *s, uint8_t out[32]);

#endif
