/* Matching a request path against a pattern such as "/sandboxes/{}/pause",
 * where "{}" stands for exactly one non-empty path segment. */
#ifndef E2B_BACKEND_ROUTE_MATCH_H
#define E2B_BACKEND_ROUTE_MATCH_H

#include <stdbool.h>
#include <stddef.h>

/* On a match, the segment "{}" matched is copied to capture (NUL-terminated,
 * truncated to cap - 1; patterns without "{}" leave it ""). */
bool route_match(const char *pattern, const char *path, char *capture, size_t cap);

#endif
