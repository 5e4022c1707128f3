/* timers.c — see timers.h. A handful of timers at most: a list. */
#include "timers.h"

#include <stdlib.h>

int e2bw_timer_start(e2bw_core *core, double at, e2bw_timer_fn fire, void *arg)
{
	e2bw_timer *t = calloc(1, sizeof *t);
	if (!t)
		return -1;
	t->at = at;
	t->fire = fire;
	t->arg = arg;
	t->next = core->timers;
	core->timers = t;
	return 0;
}

void e2bw_timer_cancel(e2bw_core *core, void *arg)
{
	e2bw_timer **p = &core->timers;
	while (*p) {
		e2bw_timer *t = *p;
		if (t->arg == arg) {
			*p = t->next;
			free(t);
		} else {
			p = &t->next;
		}
	}
}

double e2bw_timers_next_deadline(const e2bw_core *core)
{
	double best = -1;
	for (const e2bw_timer *t = core->timers; t; t = t->next)
		if (best < 0 || t->at < best)
			best = t->at;
	return best;
}

void e2bw_timers_tick(e2bw_core *core)
{
	/* a timer's owner may arm or cancel others: unlink one, then rescan */
	for (;;) {
		e2bw_timer **p = &core->timers;
		while (*p && (*p)->at > core->now)
			p = &(*p)->next;
		e2bw_timer *due = *p;
		if (!due)
			return;
		*p = due->next;
		e2bw_timer_fn fire = due->fire;
		void *arg = due->arg;
		free(due);
		fire(core, arg);
	}
}

void e2bw_timers_free(e2bw_core *core)
{
	while (core->timers) {
		e2bw_timer *next = core->timers->next;
		free(core->timers);
		core->timers = next;
	}
}
