/* xorshift.h — the unit tests' pseudo-random numbers: reproducible from a
 * fixed seed, so a failure found with random inputs repeats. */
#ifndef E2BW_TEST_XORSHIFT_H
#define E2BW_TEST_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
