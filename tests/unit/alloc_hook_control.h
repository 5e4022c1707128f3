/* alloc_hook_control.h — what test_oom.c sets (alloc_hook.c). */
#ifndef E2BW_ALLOC_HOOK_CONTROL_H
#define E2BW_ALLOC_HOOK_CONTROL_H
#include <stddef.h>
extern long hook_allocations;
extern long hook_fail_at;
extern int hook_armed;
void *hook_malloc(size_t n);
void *hook_calloc(size_t count, size_t n);
void *hook_realloc(void *p, size_t n);
#endif
