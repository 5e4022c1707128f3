/* The host an HTTP/1.x client asks for, read from the start of its request
 * without consuming it: the egress proxy peeks a sandbox's port-80
 * connection to match allowOut's domain names by the Host header, as it
 * reads a ClientHello's server name on port 443 (egress_sni.h).
 * Sans-IO: bytes in, a verdict out, no allocation, no state between calls. */
#ifndef E2B_BACKEND_EGRESS_HOST_H
#define E2B_BACKEND_EGRESS_HOST_H

#include <stdbool.h>
#include <stddef.h>

enum egress_host_result {
	EGRESS_HOST_FOUND, /* name holds the Host's name, lower-cased, without port or final dot */
	EGRESS_HOST_MORE,  /* a valid prefix: peek again when more bytes have come */
	EGRESS_HOST_BAD,   /* not a request head this reader vouches for */
};

#define EGRESS_HOST_MAX_BYTES 16384 /* at most what the caller peeks */

/* buf/len: the first bytes the client sent. FOUND only once the whole head
 * (request line to blank line, every line ending in CRLF) is there, so a
 * second Host further down cannot disagree with the first. BAD: a head over
 * EGRESS_HOST_MAX_BYTES, a bare CR or LF, a folded line, a space before a
 * header's colon, no Host or more than one, a request target that is not
 * origin-form ('/...') or '*' (an absolute URI names its own host, which
 * a server would take over Host), a name with bytes outside [A-Za-z0-9.-]
 * or an empty label, or one that does not fit cap-1 bytes. A port after
 * the name (":80") is dropped; an IPv6 literal is BAD. name is written only
 * for FOUND. */
enum egress_host_result egress_host_parse(const unsigned char *buf, size_t len, char *name, size_t cap);
/* One Host value (whitespace trimmed) as egress_host_parse reads it: its
 * name lower-cased into name (cap bytes), without port or final dot; false
 * when it is not one this reader vouches for. */
bool egress_host_name(const char *value, char *name, size_t cap);

#endif
