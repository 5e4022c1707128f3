/* The two TLS sides of a connection the egress proxy intercepts: towards
 * the sandbox a server with a leaf the egress CA makes for the server name,
 * towards the destination a client that verifies that name (the host's
 * trust store and --egress-ca-file) and offers only HTTP/1.1. */
#ifndef E2B_BACKEND_NET_EGRESS_TLS_H
#define E2B_BACKEND_NET_EGRESS_TLS_H

#include <stdbool.h>

struct net_egress_env;
struct net_egress_stream;
struct net_egress_stream_callbacks;

/* A stream that owns fd once made (not before: on NULL the caller still
 * has it). */
struct net_egress_stream *net_egress_tls_side(const struct net_egress_env *env, const char *sni, int fd,
	bool server, const struct net_egress_stream_callbacks *cb);

#endif
