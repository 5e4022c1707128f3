/* HMAC-SHA256 over lib/sha256. */
#include "lib/hmac.h"

#include "lib/sha256.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BLOCK 64

int hmac_sha256_hex(const char *key, const char *message, char out[65])
{
	uint8_t k[BLOCK] = {0}, pad[BLOCK], inner[SHA256_DIGEST_LEN], outer[SHA256_DIGEST_LEN];
	size_t key_len = strlen(key), msg_len = strlen(message);
	if (key_len > BLOCK)
		sha256(key, key_len, k);
	else
		memcpy(k, key, key_len);
	uint8_t buf[BLOCK + HMAC_MAX_MESSAGE];
	if (msg_len > HMAC_MAX_MESSAGE)
		return -1;
	for (int i = 0; i < BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	memcpy(buf, pad, BLOCK);
	memcpy(buf + BLOCK, message, msg_len);
	sha256(buf, BLOCK + msg_len, inner);
	for (int i = 0; i < BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	memcpy(buf, pad, BLOCK);
	memcpy(buf + BLOCK, inner, SHA256_DIGEST_LEN);
	sha256(buf, BLOCK + SHA256_DIGEST_LEN, outer);
	for (int i = 0; i < SHA256_DIGEST_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", outer[i]);
	return 0;
}
