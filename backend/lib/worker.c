/* The off-loop worker (worker.h). */
#define _GNU_SOURCE
#include "lib/worker.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

enum job_state {
	JOB_NONE,
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_FINISHED
};

struct worker {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	enum job_state state; /* under lock, as the three below */
	bool stop, parked;
	void (*work)(void *), (*done)(void *);
	void *arg;
	int nice;
	int wake[2]; /* the thread writes a byte once a job is finished */
	struct event *finished;
};

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	/* Its own working directory: work may chdir without moving the loop's. */
	unshare(CLONE_FS);
	setpriority(PRIO_PROCESS, (id_t)gettid(), w->nice);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (w->state != JOB_QUEUED && !w->stop)
			pthread_cond_wait(&w->changed, &w->lock);
		if (w->stop)
			break;
		w->state = JOB_RUNNING;
		void (*work)(void *) = w->work;
		void *job_arg = w->arg;
		pthread_mutex_unlock(&w->lock);
		work(job_arg);
		pthread_mutex_lock(&w->lock);
		w->state = JOB_FINISHED;
		/* Written under the lock: once worker_drain has seen FINISHED, the
		 * pipe is no longer the thread's to touch. */
		char one = 1;
		if (write(w->wake[1], &one, 1) < 0) {
			/* full: a byte is already waiting, which is all it takes */
		}
		pthread_cond_broadcast(&w->changed);
	}
	w->parked = true; /* from here on, w is worker_free's to free */
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	/* Never ends before the process (worker.h): every signal is blocked. */
	for (;;)
		pause();
	return NULL;
}

/* The finished job, taken under the lock; false when there is none. */
static bool take_finished(struct worker *w, void (**done)(void *), void **arg)
{
	bool got = w->state == JOB_FINISHED;
	if (got) {
		*done = w->done;
		*arg = w->arg;
		w->state = JOB_NONE;
	}
	return got;
}

static void on_finished(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct worker *w = arg;
	char buf[16];
	while (read(fd, buf, sizeof buf) > 0)
		;
	void (*done)(void *) = NULL;
	void *job_arg = NULL;
	pthread_mutex_lock(&w->lock);
	bool got = take_finished(w, &done, &job_arg);
	pthread_mutex_unlock(&w->lock);
	if (got)
		done(job_arg);
}

struct worker *worker_new(struct event_base *base, int priority, int nice)
{
	struct worker *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->nice = nice;
	w->wake[0] = w->wake[1] = -1;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK) != 0)
		goto fail;
	w->finished = event_new(base, w->wake[0], EV_READ | EV_PERSIST, on_finished, w);
	if (!w->finished || event_priority_set(w->finished, priority) != 0 ||
		event_add(w->finished, NULL) != 0)
		goto fail;
	/* Born with every signal blocked. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t thread;
	int rc = pthread_create(&thread, NULL, thread_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		goto fail;
	}
	pthread_detach(thread);
	return w;
fail:;
	int e = errno;
	if (w->finished)
		event_free(w->finished);
	if (w->wake[0] >= 0)
		close(w->wake[0]);
	if (w->wake[1] >= 0)
		close(w->wake[1]);
	free(w);
	errno = e;
	return NULL;
}

int worker_run(struct worker *w, void (*work)(void *arg), void (*done)(void *arg), void *arg)
{
	pthread_mutex_lock(&w->lock);
	int rc = -1;
	if (w->state == JOB_NONE) {
		w->work = work;
		w->done = done;
		w->arg = arg;
		w->state = JOB_QUEUED;
		pthread_cond_broadcast(&w->changed);
		rc = 0;
	}
	pthread_mutex_unlock(&w->lock);
	if (rc != 0)
		errno = EBUSY;
	return rc;
}

void worker_drain(struct worker *w)
{
	void (*done)(void *) = NULL;
	void *arg = NULL;
	pthread_mutex_lock(&w->lock);
	while (w->state == JOB_QUEUED || w->state == JOB_RUNNING)
		pthread_cond_wait(&w->changed, &w->lock);
	bool got = take_finished(w, &done, &arg);
	pthread_mutex_unlock(&w->lock);
	if (got)
		done(arg);
}

void worker_free(struct worker *w)
{
	if (!w)
		return;
	worker_drain(w);
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->changed);
	while (!w->parked)
		pthread_cond_wait(&w->changed, &w->lock);
	pthread_mutex_unlock(&w->lock);
	event_free(w->finished);
	close(w->wake[0]);
	close(w->wake[1]);
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
