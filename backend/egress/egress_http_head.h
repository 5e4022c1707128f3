/* One whole request head of egress_http.h: checked, its headers set, and
 * rebuilt for upstream; and what frames the body after it. */
#ifndef E2B_BACKEND_EGRESS_HTTP_HEAD_H
#define E2B_BACKEND_EGRESS_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/egress_http.h"

struct err;

#define EGRESS_HTTP_LENGTH_MAX (UINT64_C(1) << 53) /* the largest Content-Length (or chunk) taken */

/* What follows the head. */
struct egress_http_framing {
	bool chunked;
	bool passthrough; /* CONNECT, or Connection: upgrade with Upgrade */
	uint64_t length;  /* Content-Length (0 without one) */
};

/* Whether ch may be in a token (RFC 9110 section 5.6.2). */
bool egress_http_head_tchar(unsigned char ch);

/* head/len: a whole head, request line to blank line, with every line
 * ending in CRLF and no other CR or LF (the stream checked that). Checks it,
 * asks fn for the headers to set (with the Host value) and builds the head
 * to send in *out (malloc'd, *out_len bytes; the caller frees it), and sets
 * *framing. EGRESS_HTTP_BAD or _REFUSED with err filled (its status 0). */
enum egress_http_status egress_http_head_rewrite(const unsigned char *head, size_t len,
	egress_http_headers_fn fn, void *ctx, struct egress_http_framing *framing, unsigned char **out,
	size_t *out_len, struct err *err);

#endif
