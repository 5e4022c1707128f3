/* DNS names as the egress settings carry them (allowOut's domains, the
 * keys of transform rules). Pure. */
#ifndef E2B_BACKEND_NET_NAME_H
#define E2B_BACKEND_NET_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* A DNS name (labels of [a-z0-9-], 1..63, not starting or ending with
 * '-'), optionally after "*."; lowercased into out (cap bytes). */
bool net_name_domain(const char *text, char *out, size_t cap);
/* Whether host (lowercase) is pattern, or below it when pattern is "*.x.y"
 * (at any depth, never the apex x.y itself). */
bool net_name_matches(const char *pattern, const char *host);

#endif
