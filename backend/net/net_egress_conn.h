/* One connection through a sandbox's egress proxy (net_egress.h): its
 * ClientHello (port 443) or request head (port 80) peeked, admitted under
 * allowOut's domains (net_egress_admit.h), then passed on unchanged or
 * intercepted. */
#ifndef E2B_BACKEND_NET_EGRESS_CONN_H
#define E2B_BACKEND_NET_EGRESS_CONN_H

#include "net/net_egress.h"

#include <openssl/types.h>
#include <stddef.h>

struct egress_ca;
struct event_base;
struct net_egress_conn;

/* What the connections of one sandbox share, owned by net_egress.c and
 * alive while any of them is. */
struct net_egress_env {
	struct event_base *base;
	struct sandbox *sb;
	int slot;                        /* its networking's (net_nft) */
	const struct net_policy *policy; /* the current one: its rules read at each request */
	struct egress_ca *ca;
	SSL_CTX *server_ctx; /* towards the sandbox */
	SSL_CTX *client_ctx; /* towards the destination, verifying */
	net_egress_secret_fn secret;
	void *secret_ctx;
	struct net_egress_conn *conns; /* a list */
	size_t n_conns;
};

/* Takes fd, a connection accepted from the sandbox (non-blocking). */
void net_egress_conn_accept(struct net_egress_env *env, int fd);
/* Closes every connection of env at once. */
void net_egress_conn_close_all(struct net_egress_env *env);

#endif
