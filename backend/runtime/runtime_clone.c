/* Starting a sandbox's init (runtime_clone.h). */
#define _GNU_SOURCE
#include "runtime/runtime_clone.h"

#include "runtime/runtime_seccomp.h"
#include "runtime/runtime_state.h"
#include "runtime/runtime_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The cloned init before exec is a copy of the backend made by a raw
 * clone(), not glibc's fork(): a lock another thread of the backend held at
 * that moment (a worker's, lib/worker.h) stays held in the copy for good. So
 * it calls nothing of glibc that takes one: raw system calls for its ids
 * (glibc's setresuid would take the thread list's lock to reach every
 * thread), and strerrordesc_np, not strerror's translations. */

/* In the cloned init before exec: says what failed on the report pipe. */
__attribute__((noreturn)) static void init_fail(int report_fd, const char *what)
{
	char text[160];
	const char *desc = strerrordesc_np(errno);
	int n = snprintf(text, sizeof text, "%s: %s", what, desc ? desc : "unknown error");
	if (n > 0 && write(report_fd, text, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

/* In the cloned init, once the parent has written its id maps and put it
 * into the cgroups: becomes root of its user namespace. */
static void init_become_root(int go_fd, int report_fd, pid_t parent)
{
	char c = 0;
	while (read(go_fd, &c, 1) < 0 && errno == EINTR)
		;
	if (c != 'g')
		_exit(1); /* the parent gave up */
	if (syscall(SYS_setresgid, 0, 0, 0) != 0 || syscall(SYS_setresuid, 0, 0, 0) != 0)
		init_fail(report_fd, "become root in the sandbox's user namespace");
	if (!rt_g.single_id && syscall(SYS_setgroups, 0, NULL) != 0)
		init_fail(report_fd, "setgroups");
	/* After the id change, which clears it; the parent is outside the new
	 * pid namespace, so getppid() is 0 while it lives. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != 0 && getppid() != parent)
		_exit(1);
	/* A session keyring of its own (not the backend's session's). */
	syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
}

int runtime_clone_init(struct sandbox_rt *rt, char *why, size_t why_len)
{
	int p[2], go[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(go, O_CLOEXEC) != 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pid_t parent = getpid();
	/* Cloned in the sandbox's root, with the range's base id as effective
	 * uid:
	 * - the kernel charges a user namespace's per-uid counts (inotify
	 *   instances, ...) to its owner at the top: so they are the sandbox's;
	 * - the child gets the new mount namespace's copy of the working
	 *   directory, "." to its init: by path, the sandbox's root could not
	 *   pass the state directory (0700), and the init need not learn it;
	 * - changing the effective uid makes a process non-dumpable, and /proc of
	 *   one that is belongs to the machine's root, where rootless could not
	 *   write the child's maps: both stay dumpable, as they were.
	 *
	 * The raw system call changes the calling thread's ids only (glibc's
	 * setresuid changes every thread's): on a worker (lib/worker.h) the loop
	 * goes on as root meanwhile. The working directory is the thread's
	 * own there, and the process's when the loop calls. */
	long pid = -1;
	if (fchdir(rt->root_fd) == 0) {
		if (syscall(SYS_setresuid, (uid_t)-1, rt->ids.base, (uid_t)-1) == 0) {
			prctl(PR_SET_DUMPABLE, 1);
			pid = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS |
				CLONE_NEWIPC | CLONE_NEWNET | SIGCHLD, NULL, NULL, NULL, NULL);
		}
		int e = errno;
		if (pid != 0 && (syscall(SYS_setresuid, (uid_t)-1, 0, (uid_t)-1) != 0 ||
				    fchdir(rt_g.cwd_fd) != 0)) {
			fprintf(stderr, "e2b-local-backend: cannot become root again in its own directory\n");
			abort();
		}
		if (pid != 0)
			prctl(PR_SET_DUMPABLE, 1);
		errno = e;
	}
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (pid == 0) {
		/* The child: only async-signal-safe calls until exec. */
		close(go[1]);
		init_become_root(go[0], p[1], parent);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Keep only the report pipe (as fd 3), the syscall policy the
		 * init installs after its mounts (fd 4) and the init binary. */
		int init_fd = fcntl(rt_g.init_fd, F_DUPFD_CLOEXEC, 64);
		int filter_fd = fcntl(runtime_seccomp_fd(), F_DUPFD_CLOEXEC, 64);
		if (init_fd < 0 || filter_fd < 0 || dup2(p[1], 3) != 3 || dup2(filter_fd, 4) != 4)
			init_fail(p[1], "set up descriptors");
		syscall(SYS_close_range, 5U, (unsigned)init_fd - 1, 0U);
		syscall(SYS_close_range, (unsigned)init_fd + 1, ~0U, 0U);
		char hostname[] = "e2b", here[] = ".";
		char *argv[] = {"e2b-sandbox-init", here, hostname, NULL};
		char *envp[] = {NULL};
		syscall(SYS_execveat, init_fd, "", argv, envp, AT_EMPTY_PATH);
		init_fail(3, "exec e2b-sandbox-init");
	}
	close(p[1]);
	close(go[0]);
	rt->init_pid = (pid_t)pid;
	/* Its maps and cgroups before it runs anything (a child with another
	 * effective uid may not move itself into a cgroup). */
	int rc = runtime_userns_write_maps(rt->init_pid, rt->ids.base, rt->ids.base, rt->ids.count);
	char text[24];
	int len = snprintf(text, sizeof text, "%d", (int)pid);
	for (int i = 0; rc == 0 && i < RT_NCTRL; i++)
		if (rt->procs_fd[i] >= 0 && write(rt->procs_fd[i], text, (size_t)len) != len)
			rc = -1;
	if (rc == 0 && write(go[1], "g", 1) != 1)
		rc = -1;
	int e = errno;
	close(go[1]);
	if (rc != 0) {
		close(p[0]);
		snprintf(why, why_len, "cannot set up the init's user namespace: %s", strerror(e));
		return -1;
	}
	rt->report_fd = p[0];
	return 0;
}

int runtime_clone_await(struct sandbox_rt *rt, char *why, size_t why_len)
{
	char buf[256];
	size_t got = 0;
	struct pollfd pfd = {.fd = rt->report_fd, .events = POLLIN};
	for (;;) {
		int r = poll(&pfd, 1, 10000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t n = read(rt->report_fd, buf + got, sizeof buf - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got >= sizeof buf - 1)
			break;
	}
	close(rt->report_fd);
	rt->report_fd = -1;
	buf[got] = '\0';
	if (strcmp(buf, "ok") == 0)
		return 0;
	snprintf(why, why_len, "%s", got ? buf : "init did not start");
	return -1;
}
