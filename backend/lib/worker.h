/* One thread that runs a job at a time off the event loop and hands the
 * job's end back to the loop: for work that is all system calls and takes
 * milliseconds (mounting, cloning a sandbox's init, making its network
 * link), so the loop keeps answering meanwhile.
 *
 * A job's work runs on the thread and must touch nothing the loop touches
 * while it runs: no libevent, no registry, no shared allocator of ids or
 * addresses (take those on the loop before, hand them in). Its done runs on
 * the loop afterwards. The thread's working directory is its own
 * (unshare(CLONE_FS)), so work may chdir; it blocks every signal, so they
 * reach the loop; and it never exits before the process: a child it clones
 * with a parent-death signal gets that signal when the *thread* that made it
 * ends (prctl(2)), so after worker_free it only sleeps. */
#ifndef E2B_BACKEND_WORKER_H
#define E2B_BACKEND_WORKER_H

#include <stdbool.h>

struct event_base;
struct worker;

/* A worker whose jobs end at priority on base; its thread runs at the given
 * nice value (Linux: per thread), so the loop and what it serves come first.
 * NULL on failure (errno). */
struct worker *worker_new(struct event_base *base, int priority, int nice);
/* Runs work(arg) on the thread, then done(arg) on the loop. -1 (EBUSY) while
 * a job is in progress: one at a time. */
int worker_run(struct worker *w, void (*work)(void *arg), void (*done)(void *arg), void *arg);
/* Waits for the job in progress, if any, and runs its done now (from the
 * caller, which is the loop's thread). */
void worker_drain(struct worker *w);
/* Drains, then frees; the thread sleeps until the process ends. NULL is fine. */
void worker_free(struct worker *w);

#endif
