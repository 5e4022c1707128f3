/* libc_small.h — the small libc functions core.wasm links in place of musl's
 * (wasm/printf_small.c, strstr_small.c, strings_small.c, numbers_small.c). In core.wasm (E2BW_WASM) they
 * are the libc functions themselves; built natively they are small_<name>,
 * so the unit tests and fuzzers can compare them with the host libc's. */
#ifndef E2BW_LIBC_SMALL_H
#define E2BW_LIBC_SMALL_H

#include <stdarg.h>
#include <stddef.h>

#ifdef E2BW_WASM
#define LIBC_SMALL(name) name
#else
#define LIBC_SMALL(name) small_##name
#endif

int LIBC_SMALL(vsnprintf)(char *restrict s, size_t n, const char *restrict fmt, va_list ap);
int LIBC_SMALL(snprintf)(char *restrict s, size_t n, const char *restrict fmt, ...);
int LIBC_SMALL(vsprintf)(char *restrict s, const char *restrict fmt, va_list ap);
int LIBC_SMALL(sprintf)(char *restrict s, const char *restrict fmt, ...);
char *LIBC_SMALL(strstr)(const char *haystack, const char *needle);
size_t LIBC_SMALL(strlen)(const char *s);
void *LIBC_SMALL(memchr)(const void *src, int c, size_t n);
double LIBC_SMALL(strtod)(const char *restrict s, char **restrict end);
int LIBC_SMALL(sscanf)(const char *restrict text, const char *restrict format, ...);

#endif
