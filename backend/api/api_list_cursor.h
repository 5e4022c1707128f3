/* The opaque nextToken of GET /v2/sandboxes and GET /secrets, and the
 * page size both take. Like E2B's it is URL-safe base64 of
 * "<startedAt RFC 3339>__<ID>" (plus "__asc" for ascending order) naming
 * the last item served; the next page starts strictly after that position,
 * so deleting items between pages skips nothing. A secret's position is its
 * createdAt and its ID. */
#ifndef E2B_BACKEND_LIST_CURSOR_H
#define E2B_BACKEND_LIST_CURSOR_H

#include <stdbool.h>
#include <stdint.h>

#define LIST_CURSOR_ID_MAX 64
/* The limit parameter: 1..100, 100 when absent. */
#define LIST_LIMIT_DEFAULT 100
#define LIST_LIMIT_MAX 100

struct list_cursor {
	int64_t started_at_ms;
	char id[LIST_CURSOR_ID_MAX + 1];
	bool ascending;
};

/* A fresh string; NULL when out of memory. */
char *list_cursor_encode(const struct list_cursor *c);
/* 0 on success, -1 for anything that is not a token we could have made. */
int list_cursor_decode(const char *token, struct list_cursor *c);
/* The limit parameter's value (text NULL: absent, *out untouched). 0, or -1
 * for anything but an integer from 1 to LIST_LIMIT_MAX. */
int list_cursor_limit(const char *text, long *out);

#endif
