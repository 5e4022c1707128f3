/* Small string helpers the C library lacks (no GNU asprintf under -std=c11). */
#ifndef E2B_BACKEND_TEXT_H
#define E2B_BACKEND_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* printf into a fresh heap string; NULL when out of memory. Caller frees. */
char *text_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Compares two NUL-terminated secrets in time that does not depend on where
 * they first differ, so a network client cannot learn the key byte by byte. */
bool text_secret_equal(const char *a, const char *b);

#endif
