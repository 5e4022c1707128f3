/* A transform rule's header value with every ${e2b.secrets.<name>}
 * placeholder replaced by the secret's value, at the moment a request is
 * forwarded (the secret never enters the sandbox). */
#ifndef E2B_BACKEND_NET_EGRESS_FILL_H
#define E2B_BACKEND_NET_EGRESS_FILL_H

#include <stddef.h>

struct err;
struct net_egress_env;

/* A malloc'd copy of value, filled; NULL with err (which never holds a
 * secret). The caller wipes it (explicit_bzero) before freeing it. */
char *net_egress_fill(const struct net_egress_env *env, const char *value, struct err *err);

#endif
