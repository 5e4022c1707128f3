/* bignum_small.c — see bignum_small.h. 32-bit limbs whose products fit 64
 * bits: no 128-bit integers, no floating point. */
#include "bignum_small.h"

int bignum_set(uint32_t *limb, uint64_t v)
{
	int n = 0;
	do
		limb[n++] = (uint32_t)(v % BIGNUM_BASE);
	while (v /= BIGNUM_BASE);
	return n;
}

int bignum_mul_pow(uint32_t *limb, int n, uint32_t base, int k)
{
	while (k) {
		uint32_t f = 1; /* base^j < 10^9, so a limb times f plus carry fits 64 bits */
		for (; k && f < BIGNUM_BASE / 10; k--)
			f *= base;
		uint64_t carry = 0;
		for (int i = 0; i < n; i++) {
			uint64_t t = (uint64_t)limb[i] * f + carry;
			limb[i] = (uint32_t)(t % BIGNUM_BASE);
			carry = t / BIGNUM_BASE;
		}
		if (carry)
			limb[n++] = (uint32_t)carry;
	}
	return n;
}

int bignum_compare(const uint32_t *a, int na, const uint32_t *b, int nb)
{
	if (na != nb)
		return na < nb ? -1 : 1;
	while (na--)
		if (a[na] != b[na])
			return a[na] < b[na] ? -1 : 1;
	return 0;
}
