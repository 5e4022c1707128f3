/* bignum_small.h — the exact arithmetic under core.wasm's printf and strtod
 * (printf_small.c, numbers_small.c): non-negative integers as base-10^9
 * limbs, least significant first, with no leading zero limb. The caller
 * gives room for the result. */
#ifndef E2BW_BIGNUM_SMALL_H
#define E2BW_BIGNUM_SMALL_H

#include <stdint.h>

#define BIGNUM_BASE 1000000000u

/* Sets limb to v; returns its number of limbs. */
int bignum_set(uint32_t *limb, uint64_t v);

/* Multiplies limb[0..n) by base^k (base 2, 5 or 10); returns the new n. */
int bignum_mul_pow(uint32_t *limb, int n, uint32_t base, int k);

/* -1, 0 or 1 as a is less than, equal to or greater than b. */
int bignum_compare(const uint32_t *a, int na, const uint32_t *b, int nb);

#endif
