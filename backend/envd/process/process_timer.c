/* A libevent timer that a sandbox pause can suspend and resume
 * (process_timer.h). */
#include "envd/process/process_timer.h"

#include <event2/event.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void process_timer_add_event(struct event *ev, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
	evtimer_add(ev, &tv);
}

int process_timer_init(struct process_timer *t, struct event_base *base, void (*cb)(int, short, void *),
	void *arg)
{
	memset(t, 0, sizeof *t);
	t->ev = evtimer_new(base, cb, arg);
	return t->ev ? 0 : -1;
}

void process_timer_start(struct process_timer *t, int64_t ms)
{
	t->armed = true;
	if (t->suspended) {
		t->left_ms = ms;
		return;
	}
	t->due_ms = monotonic_ms() + ms;
	process_timer_add_event(t->ev, ms);
}

void process_timer_stop(struct process_timer *t)
{
	t->armed = false;
	if (t->ev)
		evtimer_del(t->ev);
}

void process_timer_suspend(struct process_timer *t)
{
	if (t->suspended)
		return;
	t->suspended = true;
	if (t->armed) {
		t->left_ms = t->due_ms - monotonic_ms();
		evtimer_del(t->ev);
	}
}

void process_timer_resume(struct process_timer *t)
{
	if (!t->suspended)
		return;
	t->suspended = false;
	if (t->armed) {
		t->due_ms = monotonic_ms() + t->left_ms;
		process_timer_add_event(t->ev, t->left_ms);
	}
}

void process_timer_free(struct process_timer *t)
{
	if (t->ev)
		event_free(t->ev);
	t->ev = NULL;
	t->armed = false;
}
