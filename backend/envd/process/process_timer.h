/* A one-shot timer that a sandbox pause can suspend and resume with the time
 * that was left (a paused VM's clocks do not run for its processes): a
 * Start's lifetime, a stream's deadline. Calls only libevent. */
#ifndef E2B_BACKEND_PROCESS_TIMER_H
#define E2B_BACKEND_PROCESS_TIMER_H

#include <stdbool.h>
#include <stdint.h>

struct event;
struct event_base;

struct process_timer {
	struct event *ev;
	int64_t due_ms;  /* monotonic, while armed and running */
	int64_t left_ms; /* while suspended */
	bool armed;
	bool suspended;
};

int process_timer_init(struct process_timer *t, struct event_base *base, void (*cb)(int, short, void *),
	void *arg);
void process_timer_start(struct process_timer *t, int64_t ms);
void process_timer_stop(struct process_timer *t);
void process_timer_suspend(struct process_timer *t);
void process_timer_resume(struct process_timer *t);
void process_timer_free(struct process_timer *t);
/* Arms a plain libevent timer ms from now (at once when ms < 0). */
void process_timer_add_event(struct event *ev, int64_t ms);

#endif
