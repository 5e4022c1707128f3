/* A request body's framing (RFC 9112, section 6): none, Content-Length or
 * chunked, decoded piece by piece as bytes arrive. The connection gate
 * (http_gate.h) decodes every body with it before evhttp sees a byte, and
 * the port proxy finds the end of a request with it; one decoder, so the
 * backend never disagrees with itself about where a request ends. */
#ifndef E2B_BACKEND_HTTP_FRAMING_H
#define E2B_BACKEND_HTTP_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct evbuffer;

enum http_framing_kind {
	HTTP_FRAMING_NONE,   /* no body */
	HTTP_FRAMING_LENGTH, /* Content-Length */
	HTTP_FRAMING_CHUNKED /* Transfer-Encoding: chunked */
};

struct http_framing {
	enum http_framing_kind kind;
	uint64_t length;  /* LENGTH: the whole body */
	uint64_t left;    /* bytes left of the body (LENGTH) or of this chunk */
	uint64_t decoded; /* body bytes taken so far */
	int state;        /* chunked: which part comes next */
	size_t trailer_bytes;
	bool done;   /* the body is complete */
	bool failed; /* malformed chunked framing */
};

void http_framing_init(struct http_framing *f, enum http_framing_kind kind, uint64_t length);

/* Moves the body's bytes from the front of src to out (at most max body
 * bytes; out may be NULL to discard them). raw keeps the framing (chunk
 * sizes, CRLFs, trailer) in out, for a proxy that forwards the request as
 * sent; otherwise out gets the body alone. Stops at the end of the body,
 * leaving whatever follows in src. Returns 0, or -1 once the framing is
 * malformed (f->failed). */
int http_framing_take(struct http_framing *f, struct evbuffer *src, struct evbuffer *out, size_t max,
	bool raw);

#endif
