/* Forked helpers of the store (store_helper.h). The helper writes "ok" or
 * its error's status and message ("<status> <message>") into a pipe and
 * exits; the loop reads until EOF. The process manager reaps every child
 * (waitpid -1), so the pipe, not the exit status, carries the result. */
#define _GNU_SOURCE
#include "store/store_helper.h"

#include "lib/child_fds.h"
#include "lib/err.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

struct helper {
	struct helper *next;
	pid_t pid;
	int fd;
	struct event *ev;
	store_helper_done done;
	void *ctx;
	char said[512];
	size_t len;
};
static struct helper *helpers;

/* What a failed helper said ("<status> <message>"), or that it said nothing. */
static void said_to_err(const char *said, bool spoke, struct err *err)
{
	char *end;
	long status = strtol(said, &end, 10);
	if (!spoke)
		err_set(err, 0, "the helper died before it finished");
	else if (end != said && *end == ' ')
		err_set(err, (int)status, "%s", end + 1);
	else
		err_set(err, 0, "%s", said);
}

static void finish(struct helper *h)
{
	for (struct helper **pp = &helpers; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	if (h->ev)
		event_free(h->ev);
	close(h->fd);
	h->said[h->len] = '\0';
	bool ok = strncmp(h->said, "ok\n", 3) == 0;
	char *nl = strchr(h->said, '\n');
	if (nl)
		*nl = '\0';
	if (ok) {
		h->done(h->ctx, NULL);
	} else {
		struct err err;
		said_to_err(h->said, h->len > 0, &err);
		h->done(h->ctx, &err);
	}
	free(h);
}

/* 1 at EOF (the helper has exited), 0 for more to come. */
static int drain(struct helper *h)
{
	for (;;) {
		char buf[256];
		ssize_t n = read(h->fd, buf, sizeof buf);
		if (n == 0)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : 1;
		size_t room = sizeof h->said - 1 - h->len;
		size_t take = (size_t)n < room ? (size_t)n : room;
		memcpy(h->said + h->len, buf, take);
		h->len += take;
	}
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	if (drain(arg))
		finish(arg);
}

/* In the helper: its result on fd 3, nothing else of the backend's open
 * (the state directory's lock included), deeper trees than the backend's
 * descriptor limit allows. */
__attribute__((noreturn)) static void run_job(const char *name, int fd, store_helper_job job, void *arg)
{
	prctl(PR_SET_NAME, name);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpgid(0, 0); /* its own group: store_helper_kill ends what it started too */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (child_fds(fd) != 0)
		_exit(1);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct err err;
	err_clear(&err);
	if (job(arg, &err) == 0)
		dprintf(3, "ok\n");
	else
		dprintf(3, "%d %.399s\n", err.status, err.msg[0] ? err.msg : "failed");
	_exit(0);
}

int store_helper_run(struct event_base *base, const char *name, store_helper_job job, void *arg,
	store_helper_done done, void *ctx)
{
	struct helper *h = calloc(1, sizeof *h);
	int p[2] = {-1, -1};
	if (!h || pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(h);
		return -1;
	}
	h->fd = p[0];
	h->done = done;
	h->ctx = ctx;
	h->ev = event_new(base, p[0], EV_READ | EV_PERSIST, on_readable, h);
	pid_t pid = h->ev && event_add(h->ev, NULL) == 0 ? fork() : -1;
	if (pid == 0) {
		close(p[0]);
		run_job(name, p[1], job, arg);
	}
	int e = errno;
	if (pid > 0)
		setpgid(pid, pid); /* as the child does: whichever runs first */
	close(p[1]);
	if (pid < 0) {
		if (h->ev)
			event_free(h->ev);
		close(p[0]);
		free(h);
		errno = e;
		return -1;
	}
	h->pid = pid;
	h->next = helpers;
	helpers = h;
	return 0;
}

int store_helper_kill(void *ctx)
{
	for (struct helper *h = helpers; h; h = h->next) {
		if (h->ctx == ctx) {
			if (kill(-h->pid, SIGKILL) != 0)
				kill(h->pid, SIGKILL);
			return 0;
		}
	}
	errno = ESRCH;
	return -1;
}

void store_helper_wait_all(void)
{
	/* Blocking is right here: the backend is about to exit. */
	while (helpers) {
		struct helper *h = helpers;
		fcntl(h->fd, F_SETFL, fcntl(h->fd, F_GETFL) & ~O_NONBLOCK);
		drain(h);
		finish(h);
	}
}
