/* alloc.h — cJSON's allocator hooks and the count of failed allocations that
 * tells a complete result from one cut short by out-of-memory. The lowest
 * layer of the core: it calls nothing of the core. */
#ifndef E2BW_ALLOC_H
#define E2BW_ALLOC_H

#include "core_state.h"

/* Installs cJSON's allocator hooks, which count failed allocations. */
void e2bw_alloc_hooks(void);
/* Every input starts here: the time, and the allocation-failure mark. */
void e2bw_enter(e2bw_core *core, double now_ms);
/* How many cJSON allocations have failed so far, in this process. cJSON
 * ignores most of them (an Add* that fails leaves the member out), so a
 * result built while this moved is not sent as a success: it may be partial. */
unsigned long e2bw_alloc_failures(void);

#endif
