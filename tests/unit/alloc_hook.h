/* alloc_hook.h — force-included (-include) when the core and cJSON are built
 * for the unit tests: their allocations go through counting wrappers that
 * can fail the n-th one (test_oom.c). Production builds do not use it. */
#ifndef E2BW_ALLOC_HOOK_H
#define E2BW_ALLOC_HOOK_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void *hook_malloc(size_t n);
void *hook_calloc(size_t count, size_t n);
void *hook_realloc(void *p, size_t n);

#define malloc(n) hook_malloc(n)
#define calloc(c, n) hook_calloc(c, n)
#define realloc(p, n) hook_realloc(p, n)

#endif
