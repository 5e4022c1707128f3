/* strings_small.c — strlen and memchr for core.wasm, 16 bytes a step with
 * WebAssembly SIMD where musl's go a word at a time: every files.write passes
 * its content (up to 16 MiB) through both, and every message through strlen.
 *
 * The SIMD loops read whole aligned 16-byte blocks, past the terminator or
 * the end of the range within the last one. In WebAssembly that is safe: an
 * aligned block never crosses the end of linear memory (a multiple of
 * 64 KiB) and nothing inside it is protected. In C on a real machine it is
 * not, so natively (the unit tests' small_strlen, small_memchr) the same
 * functions are plain loops; tests/node/wasm-modules.test.mjs checks the
 * SIMD ones through core.wasm against the wasi build's libc. */
#include <stdint.h>
#include <string.h>

#include "libc_small.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

/* Bit i set when byte i of the aligned block at p is c. */
static inline __attribute__((always_inline)) unsigned block_eq(const unsigned char *p, unsigned char c)
{
	return (unsigned)wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(p), wasm_i8x16_splat((char)c)));
}
#endif

size_t LIBC_SMALL(strlen)(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
#ifdef __wasm_simd128__
	for (; (uintptr_t)p & 15; p++) /* up to the first aligned block */
		if (!*p)
			return (size_t)(p - (const unsigned char *)s);
	for (;; p += 16) {
		unsigned m = block_eq(p, 0);
		if (m)
			return (size_t)(p - (const unsigned char *)s) + (size_t)__builtin_ctz(m);
	}
#else
	while (*p)
		p++;
	return (size_t)(p - (const unsigned char *)s);
#endif
}

void *LIBC_SMALL(memchr)(const void *src, int c, size_t n)
{
	const unsigned char *p = src;
	unsigned char ch = (unsigned char)c;
#ifdef __wasm_simd128__
	for (; n && ((uintptr_t)p & 15); p++, n--)
		if (*p == ch)
			return (void *)(uintptr_t)p;
	for (; n >= 16; p += 16, n -= 16) {
		unsigned m = block_eq(p, ch);
		if (m)
			return (void *)(uintptr_t)(p + __builtin_ctz(m));
	}
#endif
	for (; n; p++, n--)
		if (*p == ch)
			return (void *)(uintptr_t)p;
	return NULL;
}
