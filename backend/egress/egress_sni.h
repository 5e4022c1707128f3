/* The server name a TLS client asks for, read from its ClientHello without
 * consuming it: the proxy peeks the first bytes of an intercepted
 * connection (MSG_PEEK), decides by the name whether to terminate TLS or
 * splice the bytes through, and whoever reads next still gets them all.
 * Sans-IO: bytes in, a verdict out, no allocation, no state between calls. */
#ifndef E2B_BACKEND_EGRESS_SNI_H
#define E2B_BACKEND_EGRESS_SNI_H

#include <stddef.h>

enum egress_sni_result {
	EGRESS_SNI_FOUND,   /* name holds the host_name, lower-cased, NUL-terminated */
	EGRESS_SNI_NONE,    /* a complete ClientHello without a host_name server_name */
	EGRESS_SNI_MORE,    /* a valid prefix: peek again when more bytes have come */
	EGRESS_SNI_NOT_TLS, /* not a TLS handshake starting with a ClientHello, or malformed */
};

#define EGRESS_SNI_MAX_BYTES (5 + 16384 + 5 + 16384) /* at most what the caller peeks */

/* buf/len: the first bytes the client sent (the caller peeks them with
 * MSG_PEEK, so they stay in the socket for whoever reads next). The
 * ClientHello may span several TLS records of type handshake (22), each up
 * to 16384 bytes. A name longer than cap-1 or with bytes outside
 * [A-Za-z0-9.-] or empty labels -> NOT_TLS (we never MITM a name we cannot
 * read).
 * Every length field is checked against its container (record, handshake,
 * session id, cipher suites, compression methods, extensions, server_name
 * list); only handshake type 1; TLS 1.0-1.3 (1.3's legacy_version is
 * 0x0303). FOUND and NONE come only once the whole ClientHello is there, so
 * a hello that would need more than EGRESS_SNI_MAX_BYTES is NOT_TLS, never
 * MORE. Also NOT_TLS: a label over 63 bytes or a name over 253, a second
 * host_name or server_name extension, bytes after the hello in its last
 * record. Bytes past EGRESS_SNI_MAX_BYTES are not looked at. name is
 * written only for FOUND. */
enum egress_sni_result egress_sni_parse(const unsigned char *buf, size_t len, char *name, size_t cap);

#endif
