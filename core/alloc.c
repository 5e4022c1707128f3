/* alloc.c — cJSON's allocator, counting failures, and the mark each input
 * takes of that count (alloc.h). The lowest layer of the core: every
 * input entry point (core.c, http_ops.c) starts with e2bw_enter. */
#include <stdlib.h>

#include "alloc.h"

/* cJSON's hooks are process-wide and carry no context, so the count of
 * failed allocations is too: a monotonic counter, only ever compared. Its
 * one effect is conservative (a success built while any allocation failed
 * is answered as out of memory instead). */
static unsigned long alloc_failures;
static void *counting_malloc(size_t n)
{
	void *p = malloc(n);
	if (!p)
		alloc_failures++;
	return p;
}
static void plain_free(void *p)
{
	free(p);
}
unsigned long e2bw_alloc_failures(void)
{
	return alloc_failures;
}

void e2bw_alloc_hooks(void)
{
	cJSON_Hooks hooks = {counting_malloc, plain_free};
	cJSON_InitHooks(&hooks);
}

void e2bw_enter(e2bw_core *core, double now_ms)
{
	core->now = now_ms;
	core->alloc_mark = alloc_failures;
}
