/* lib/worker.c: a job's work runs on another thread with its own working
 * directory and every signal blocked, its done on the loop afterwards; one
 * job at a time; drain runs a finished job's done at once; free stops the
 * thread without ending it. */
#define _GNU_SOURCE
#include "check.h"
#include "lib/worker.h"
#include "suites.h"

#include <event2/event.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct job {
	struct event_base *base;
	pthread_t worker_thread;
	int sigpipe_blocked;
	char cwd[256];
	int done_calls;
	bool done_on_loop;
	pthread_t loop_thread;
	int work_ms;
};

static void work(void *arg)
{
	struct job *j = arg;
	j->worker_thread = pthread_self();
	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	j->sigpipe_blocked = sigismember(&now, SIGPIPE);
	/* Its working directory is its own: the loop's stays where it was. */
	if (chdir("/") == 0 && getcwd(j->cwd, sizeof j->cwd) == NULL)
		j->cwd[0] = '\0';
	if (j->work_ms)
		usleep((useconds_t)j->work_ms * 1000);
}

static void done(void *arg)
{
	struct job *j = arg;
	j->done_calls++;
	j->done_on_loop = pthread_equal(pthread_self(), j->loop_thread);
	if (j->base)
		event_base_loopbreak(j->base);
}

void suite_worker(void)
{
	char before[256], after[256];
	CHECK(getcwd(before, sizeof before) != NULL);
	struct event_base *base = event_base_new();
	CHECK(base != NULL);
	CHECK(event_base_priority_init(base, 2) == 0);
	struct worker *w = worker_new(base, 1, 10);
	CHECK(w != NULL);
	if (!w)
		return;

	/* A job: work on the thread, done on the loop, once. */
	struct job a = {.base = base, .loop_thread = pthread_self()};
	CHECK(worker_run(w, work, done, &a) == 0);
	event_base_dispatch(base);
	CHECK_NUM(a.done_calls, 1);
	CHECK(a.done_on_loop);
	CHECK(!pthread_equal(a.worker_thread, pthread_self()));
	CHECK_NUM(a.sigpipe_blocked, 1);
	CHECK_STR(a.cwd, "/");
	CHECK(getcwd(after, sizeof after) != NULL);
	CHECK_STR(after, before);

	/* One at a time: a second job while the first runs is refused. */
	struct job b = {.loop_thread = pthread_self(), .work_ms = 50};
	struct job c = {.loop_thread = pthread_self()};
	CHECK(worker_run(w, work, done, &b) == 0);
	CHECK(worker_run(w, work, done, &c) == -1);
	/* Drain waits for it and runs its done now, from here. */
	worker_drain(w);
	CHECK_NUM(b.done_calls, 1);
	CHECK(b.done_on_loop);
	CHECK_NUM(c.done_calls, 0);
	/* Nothing is left for the loop: the wake-up it finds runs nothing. */
	struct timeval soon = {0, 20000};
	event_base_loopexit(base, &soon);
	event_base_dispatch(base);
	CHECK_NUM(b.done_calls, 1);
	/* Free the same way: the job in progress ends first. */
	struct job d = {.loop_thread = pthread_self(), .work_ms = 20};
	CHECK(worker_run(w, work, done, &d) == 0);
	worker_free(w);
	CHECK_NUM(d.done_calls, 1);
	worker_free(NULL);
	event_base_free(base);
}
