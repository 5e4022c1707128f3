/* One-shot SHA-256 over the core's implementation (core/sha256.c): the
 * backend verifies exactly the v1_ signatures the plugin computes. */
#include "lib/sha256.h"

#include "../../core/sha256.h"

void sha256(const void *data, size_t len, uint8_t out[SHA256_DIGEST_LEN])
{
	e2bw_sha256 s;
	e2bw_sha256_init(&s);
	e2bw_sha256_update(&s, data, len);
	e2bw_sha256_final(&s, out);
}
