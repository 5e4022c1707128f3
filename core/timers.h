/* timers.h — waiting without a clock: a handler that must wait (a template
 * build polls its status every 200 ms) arms a timer; e2bw_core_next_deadline
 * includes it and e2bw_core_tick fires it. Calls nothing of the core: a
 * timer reaches its owner only through the pointer the owner armed it with. */
#ifndef E2BW_TIMERS_H
#define E2BW_TIMERS_H

#include "core_state.h"

typedef void (*e2bw_timer_fn)(e2bw_core *core, void *arg);

struct e2bw_timer {
	double at; /* same clock as now_ms */
	e2bw_timer_fn fire;
	void *arg;
	e2bw_timer *next;
};

/* fire(core, arg) runs once, when an input's time reaches `at`. Returns -1
 * when out of memory (nothing was armed). */
int e2bw_timer_start(e2bw_core *core, double at, e2bw_timer_fn fire, void *arg);
/* Disarms every timer armed with arg. */
void e2bw_timer_cancel(e2bw_core *core, void *arg);
double e2bw_timers_next_deadline(const e2bw_core *core);
void e2bw_timers_tick(e2bw_core *core);
void e2bw_timers_free(e2bw_core *core);

#endif
