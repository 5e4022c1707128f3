/* alloc_hook.c — the counting allocator behind alloc_hook.h. */
#include <stdlib.h>

#include "alloc_hook_control.h"

long hook_allocations = 0; /* allocations seen while armed */
long hook_fail_at = 0;     /* fail the allocation with this number (1-based); 0: never */
int hook_armed = 0;        /* only the core's own work is counted */

static int fail_now(void)
{
	if (!hook_armed)
		return 0;
	return ++hook_allocations == hook_fail_at;
}

void *hook_malloc(size_t n)
{
	return fail_now() ? NULL : malloc(n);
}
void *hook_calloc(size_t count, size_t n)
{
	return fail_now() ? NULL : calloc(count, n);
}
void *hook_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : realloc(p, n);
}
