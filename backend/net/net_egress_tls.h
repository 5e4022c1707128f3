/* The two TLS sides of a connection the egress proxy intercepts: towards
 * the sandbox a server with a leaf the egress CA makes for the server name,
 * towards the destination a client that verifies that name (the host's
 * trust store and --egress-ca-file) and offers only HTTP/1.1. */
#ifndef E2B_BACKEND_NET_EGRESS_TLS_H
#define E2B_BACKEND_NET_EGRESS_TLS_H

#include <stdbool.h>

struct bufferevent;
struct net_egress_env;

/* A bufferevent that owns fd once made (not before: on NULL the caller
 * still has it). */
struct bufferevent *net_egress_tls_side(const struct net_egress_env *env, const char *sni, int fd,
	bool server);

#endif
