/* Rewriting the headers of HTTP/1.1 requests on a byte stream, sans-IO: the
 * proxy feeds what the client sent (decrypted) in any chunking, and this
 * emits what goes upstream: each request head with the headers of the
 * sandbox's rules set, bodies and trailers unchanged. It is strict where a
 * client and the upstream server could read a stream's framing differently
 * (request smuggling), as h11 and llhttp's strict mode are: what it cannot
 * frame exactly is refused, never guessed. */
#ifndef E2B_BACKEND_EGRESS_HTTP_H
#define E2B_BACKEND_EGRESS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct err;

#define EGRESS_HTTP_HEAD_MAX 65536  /* bytes of a request head, request line to blank line */
#define EGRESS_HTTP_HEADERS_MAX 100 /* header lines of a head, and trailer lines of a body */

struct egress_header {
	const char *name;
	const char *value;
};

/* Called at each request head: the headers to set on this request (each
 * replaces every header of that name, case-insensitively, and is appended
 * after the others), or NULL/n=0 for none; host is the request's Host value
 * (NULL without one). The returned array must stay valid until the next
 * call or egress_http_free. Return -1 with err filled to refuse the request
 * (the rewriter then fails with EGRESS_HTTP_REFUSED and that message; err
 * comes empty, and one left empty says "the request was refused"). A name
 * that is not a token, a value with CR, LF, NUL or another control byte but
 * HTAB, or a name that frames the stream (Content-Length,
 * Transfer-Encoding, Connection, Upgrade) is REFUSED too. */
typedef int (*egress_http_headers_fn)(void *ctx, const char *host, const struct egress_header **headers,
	size_t *n, struct err *err);
/* Receives the bytes to send upstream, in order. It must not free the rewriter. */
typedef void (*egress_http_emit_fn)(void *ctx, const void *bytes, size_t len);

enum egress_http_status {
	EGRESS_HTTP_OK = 0,
	EGRESS_HTTP_BAD = -1, /* malformed or over a limit: answer 400 and close */
	EGRESS_HTTP_REFUSED = -2,
};

/* NULL when out of memory. */
struct egress_http *egress_http_new(egress_http_headers_fn headers, egress_http_emit_fn emit, void *ctx);
/* Feeds bytes from the client in any chunking; emits the rewritten stream.
 * After an error every later call returns the same error, and err (may be
 * NULL; left as it was on OK) names the problem in words (never echoing
 * header values), with status 0.
 * The request line is METHOD SP target SP HTTP/1.0 or 1.1. BAD: a head over
 * EGRESS_HTTP_HEAD_MAX bytes or EGRESS_HTTP_HEADERS_MAX headers, obs-fold,
 * a bare LF or lone CR, NUL or another control byte in a field, a space
 * before a colon, two Host headers, Content-Length with Transfer-Encoding,
 * differing Content-Lengths or one over 2^53, Transfer-Encoding in HTTP/1.0
 * or not ending in chunked (once), bad chunk framing. CRLFs before a
 * request line are dropped. A head is emitted once it is whole: the
 * original request line and kept header lines byte for byte, then the set
 * headers as "Name: value\r\n", then the blank line. Body bytes (with their
 * chunk framing and trailers) are emitted as they come; on an error inside
 * a body, the bytes before the offending one have been emitted. */
enum egress_http_status egress_http_feed(struct egress_http *h, const void *bytes, size_t len,
	struct err *err);
/* True once the stream switched to pass-through (an Upgrade or CONNECT
 * request head was emitted): everything after is emitted unchanged. */
bool egress_http_passthrough(const struct egress_http *h);
void egress_http_free(struct egress_http *h);

#endif
