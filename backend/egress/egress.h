/* egress/ — the pieces of the egress proxy that rewrites a sandbox's
 * outbound HTTPS under its network rules (E2B's `network.rules` transforms):
 * which server a TLS client asks for (egress_sni.h) and which host an HTTP
 * client does (egress_host.h), the SOCKS5 handshake of a tunnel through a
 * proxy the user names (egress_socks.h), the backend's egress
 * CA and the leaf certificates it mints for intercepted hosts
 * (egress_ca.h), and the rewriting of HTTP/1.1 request heads on the
 * decrypted stream (egress_http.h, whole heads in egress_http_head.h).
 * Each is self-contained and sans-IO: no sockets, no event loop, nothing
 * of the sandboxes; the proxy that drives them lives above.
 * Owns: the CA's key and certificate (egress-ca.key, egress-ca.crt in the
 * directory it is given), the leaf key and the cache of leaves.
 * May call: lib/, libc and OpenSSL (libssl, libcrypto) only. */
#ifndef E2B_BACKEND_EGRESS_H
#define E2B_BACKEND_EGRESS_H

#include "egress/egress_ca.h"
#include "egress/egress_host.h"
#include "egress/egress_http.h"
#include "egress/egress_sni.h"
#include "egress/egress_socks.h"

#endif
