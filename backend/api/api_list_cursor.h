/* The opaque nextToken of GET /v2/sandboxes. Like E2B's it is URL-safe
 * base64 of "<startedAt RFC 3339>__<sandboxID>" (plus "__asc" for ascending
 * order) naming the last item served; the next page starts strictly after
 * that position, so deleting sandboxes between pages skips nothing. */
#ifndef E2B_BACKEND_LIST_CURSOR_H
#define E2B_BACKEND_LIST_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

#define LIST_CURSOR_ID_MAX 64

struct list_cursor {
	int64_t started_at_ms;
	char id[LIST_CURSOR_ID_MAX + 1];
	bool ascending;
};

/* A fresh string; NULL when out of memory. */
char *list_cursor_encode(const struct list_cursor *c);
/* 0 on success, -1 for anything that is not a token we could have made. */
int list_cursor_decode(const char *token, struct list_cursor *c);

#endif
