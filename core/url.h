/* url.h — percent-encoding for URL paths and query values. */
#ifndef E2BW_URL_H
#define E2BW_URL_H

#include <stddef.h>

#include "buf.h"

/* Appends s percent-encoded: everything but RFC 3986 unreserved characters
 * (A-Z a-z 0-9 - . _ ~) becomes %XX. Returns 0, or -1 when out of memory. */
int e2bw_url_encode(e2bw_buf *out, const char *s, size_t len);
int e2bw_url_encode_str(e2bw_buf *out, const char *s);

#endif
