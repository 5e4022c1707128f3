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

/* True when text[0..len) is well-formed UTF-8. */
bool text_utf8_valid(const char *text, size_t len);

/* A copy of text with every byte that does not start a valid UTF-8 sequence
 * replaced by U+FFFD, as Go's encoding/json does when it decodes a string.
 * NUL-terminated, length in *out_len; NULL when out of memory. */
char *text_utf8_replace_invalid(const char *text, size_t len, size_t *out_len);

/* True when a JSON text has a string holding NUL (a \u0000 escape or a raw
 * zero byte): cJSON would silently cut that string at the NUL. */
bool text_json_has_nul_escape(const char *text, size_t len);

#endif
