/* Starting a sandbox's init (runtime_clone.h). */
#define _GNU_SOURCE
#include "runtime/runtime_clone.h"

#include "lib/child_stack.h"
#include "lib/err.h"
#include "lib/clone3.h"
#include "lib/init_wire.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_seccomp.h"
#include "runtime/runtime_spawn.h"
#include "runtime/runtime_state.h"
#include "runtime/runtime_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/futex.h>
#include <linux/keyctl.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The cloned init, until it executes e2b-sandbox-init, shares the backend's
 * memory (CLONE_VM, as a vfork child does) on a stack of its own. A copy of
 * the backend, as fork makes, cost the copy of its page tables and then a
 * copy-on-write fault, with a TLB shootdown on every CPU, for each page the
 * backend wrote while the copy lived and after; under a paging-based
 * hypervisor that was a large part of a create's CPU (docs/PERFORMANCE.md,
 * "Sandbox inits and removals without a copy of the backend"). The child
 * runs while its parent goes on (writing its maps, then other work), so:
 * - it writes no memory of the backend's but its own stack; glibc's errno
 *   is the one thing it shares (the thread's), written only when a call
 *   fails, after which it reports and exits;
 * - it calls nothing of glibc that takes a lock (a lock another thread held
 *   stays held for it): raw system calls for its ids (glibc's setresuid
 *   would take the thread list's lock to reach every thread), and
 *   strerrordesc_np, not strerror's translations;
 * - the mm's dumpable flag is the backend's as well: the id change that
 *   clears it is undone at once (PR_SET_DUMPABLE), as the parent does for
 *   its own.
 * Rootless clones a copy (fork's semantics): there a backend that is not
 * dumpable for a moment could not write the maps of another sandbox's init
 * being made meanwhile (its /proc files would belong to the machine's root).
 * So does a ThreadSanitizer build, which cannot follow a CLONE_VM child. */

/* What the cloned init reads before it executes: the calling thread's, kept
 * for its next init once this one has executed or ended. */
struct init_launch {
	char *stack, *stack_top; /* lib/child_stack.h */
	int running; /* 1 until the child executes or ends: the kernel clears it (CLONE_CHILD_CLEARTID) */
	int go_fd,
		go_write_fd; /* the socket pair the parent says "go" on: the child reads, and closes its copy of the other end */
	int report_fd; /* the report pipe's write end */
	pid_t parent;
};
static __thread struct init_launch launch;

#define INIT_STACK (128 * 1024)

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

/* In the cloned init, once the parent has written its id maps (and, on
 * cgroup v1, put it into the cgroups): takes its ends of the requests and
 * events sockets (made in its network namespace, where a checkpoint looks
 * for them) with the parent's "go", and becomes root of its user namespace. */
static void init_become_root(const struct init_launch *l, int served[2])
{
	char c = 0;
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = &c, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof control.buf};
	while (recvmsg(l->go_fd, &mh, MSG_CMSG_CLOEXEC) < 0 && errno == EINTR)
		;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (c != 'g' || !cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		_exit(1); /* the parent gave up */
	memcpy(served, CMSG_DATA(cm), 2 * sizeof(int));
	if (syscall(SYS_setresgid, 0, 0, 0) != 0 || syscall(SYS_setresuid, 0, 0, 0) != 0)
		init_fail(l->report_fd, "become root in the sandbox's user namespace");
	if (!runtime_self()->single_id && syscall(SYS_setgroups, 0, NULL) != 0)
		init_fail(l->report_fd, "setgroups");
	/* The ids changed: the mm, the backend's when shared, is dumpable again. */
	prctl(PR_SET_DUMPABLE, 1);
	/* After the id change, which clears it; the parent is outside the new
	 * pid namespace, so getppid() is 0 while it lives. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != 0 && getppid() != l->parent)
		_exit(1);
	/* A session keyring of its own (not the backend's session's). */
	syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
}

/* The cloned init: only async-signal-safe calls until exec. */
static int init_main(void *arg)
{
	const struct init_launch *l = arg;
	close(l->go_write_fd);
	int served[2];
	init_become_root(l, served);
	/* Keep only the report pipe (as fd 3), the syscall policy the init
	 * installs after its mounts (fd 4), its ends of the requests and events
	 * sockets (INIT_FD_REQUESTS, INIT_FD_EVENTS) and the init binary. Each
	 * is moved above them first, so that no dup2 overwrites another. */
	int init_fd = fcntl(runtime_self()->init_fd, F_DUPFD_CLOEXEC, 64);
	int filter_fd = fcntl(runtime_seccomp_fd(), F_DUPFD_CLOEXEC, 64);
	int report_fd = fcntl(l->report_fd, F_DUPFD_CLOEXEC, 64);
	int req_fd = fcntl(served[0], F_DUPFD_CLOEXEC, 64);
	int ev_fd = fcntl(served[1], F_DUPFD_CLOEXEC, 64);
	if (init_fd < 0 || filter_fd < 0 || report_fd < 0 || req_fd < 0 || ev_fd < 0 ||
		dup2(report_fd, 3) != 3 || dup2(filter_fd, 4) != 4 ||
		dup2(req_fd, INIT_FD_REQUESTS) != INIT_FD_REQUESTS ||
		dup2(ev_fd, INIT_FD_EVENTS) != INIT_FD_EVENTS)
		init_fail(l->report_fd, "set up descriptors");
	syscall(SYS_close_range, (unsigned)INIT_FD_EVENTS + 1, (unsigned)init_fd - 1, 0U);
	syscall(SYS_close_range, (unsigned)init_fd + 1, ~0U, 0U);
	char hostname[] = "e2b", here[] = ".";
	char *argv[] = {"e2b-sandbox-init", here, hostname, runtime_self()->init_path, NULL};
	char *envp[] = {NULL};
	/* Born with every signal blocked (clone_init_child): unblocked only
	 * now, so no handler of the backend's ever runs here. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	syscall(SYS_execveat, init_fd, "", argv, envp, AT_EMPTY_PATH);
	init_fail(3, "exec e2b-sandbox-init");
}

/* The new init (a pidfd) and its namespaces (rt->ns_fd), opened while it
 * waits for "go": its pid cannot name another process yet. Commands and
 * sockets join them through these descriptors ever after (runtime_enter.c),
 * never by a pid that, once the init had died and been reaped, could be
 * another sandbox's init. */
int runtime_clone_open_namespaces(struct sandbox_rt *rt)
{
	static const char *const names[RT_NNS] = {"user", "uts", "ipc", "net", "mnt", "pid"};
	rt->init_pidfd = (int)syscall(SYS_pidfd_open, rt->init_pid, 0);
	if (rt->init_pidfd < 0)
		return -1;
	for (int i = 0; i < RT_NNS; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)rt->init_pid, names[i]);
		rt->ns_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (rt->ns_fd[i] < 0)
			return -1;
	}
	return 0;
}

/* The thread's launch block, free: its last init has executed or ended (at
 * once, unless that one is still on its way out). NULL: no stack. */
static struct init_launch *launch_block(void)
{
	int v;
	while ((v = __atomic_load_n(&launch.running, __ATOMIC_ACQUIRE)) != 0)
		syscall(SYS_futex, &launch.running, FUTEX_WAIT, v, NULL, NULL, 0);
	launch.stack_top = child_stack_top(&launch.stack, INIT_STACK);
	return launch.stack_top ? &launch : NULL;
}

/* Clones the init with every signal blocked (init_main unblocks them): on
 * cgroup v2 directly into its cgroup (cgroup_fd; clone3), on v1 into the
 * backend's, to be moved. */
static pid_t clone_init_child(struct init_launch *l, int ns_flags, int cgroup_fd)
{
#ifdef __SANITIZE_THREAD__
	bool shared = false;
#else
	bool shared = runtime_self()->mode == ISOLATION_FULL;
#endif
	int flags = ns_flags;
	if (shared) {
		flags |= CLONE_VM | CLONE_CHILD_CLEARTID;
		__atomic_store_n(&l->running, 1, __ATOMIC_RELEASE);
	}
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t pid;
	if (cgroup_fd >= 0) {
		struct clone3_args a = {.flags = (uint64_t)flags | CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)cgroup_fd};
		if (shared) {
			a.stack = (uint64_t)(uintptr_t)l->stack;
			a.stack_size = INIT_STACK;
			a.child_tid = (uint64_t)(uintptr_t)&l->running;
		}
		pid = clone3_start(&a, init_main, l);
	} else {
		pid = clone(init_main, l->stack_top, flags | SIGCHLD, l, NULL, NULL, &l->running);
	}
	int e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		__atomic_store_n(&l->running, 0, __ATOMIC_RELEASE);
	errno = e;
	return pid;
}

/* "go", with the init's ends of its sockets. */
static int say_go(int fd, const int served[2])
{
	char g = 'g';
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = &g, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof control.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(c), served, 2 * sizeof(int));
	return sendmsg(fd, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int runtime_clone_init(struct sandbox_rt *rt, struct err *err)
{
	int p[2], go[2], served[2] = {-1, -1};
	if (pipe2(p, O_CLOEXEC) != 0)
		return err_set(err, 500, "%s", strerror(errno));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return err_set(err, 500, "%s", strerror(e));
	}
	struct init_launch *l = launch_block();
	if (l) {
		l->go_fd = go[0];
		l->go_write_fd = go[1];
		l->report_fd = p[1];
		l->parent = getpid();
	}
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
	 * own there, and the process's when the loop calls.
	 *
	 * Cloned into its cgroup (v2), the clone must also be allowed to write
	 * there as the writer of cgroup.procs would: the thread keeps its
	 * capabilities over the id change (SECBIT_NO_SETUID_FIXUP, the thread's
	 * own, until the change is undone). The child gets none of them: a new
	 * user namespace gives it that namespace's, and default securebits. */
	pid_t pid = -1;
	int cgroup_fd = runtime_cgroup_clone_fd(&rt->cg);
	int bits = cgroup_fd >= 0 ? prctl(PR_GET_SECUREBITS) : -1;
	if (l && fchdir(rt->root_fd) == 0 &&
		(bits < 0 || prctl(PR_SET_SECUREBITS, bits | SECBIT_NO_SETUID_FIXUP) == 0)) {
		if (syscall(SYS_setresuid, (uid_t)-1, rt->ids.base, (uid_t)-1) == 0) {
			prctl(PR_SET_DUMPABLE, 1);
			pid = clone_init_child(l,
				CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC |
					CLONE_NEWNET,
				cgroup_fd);
		}
		int e = errno;
		if (syscall(SYS_setresuid, (uid_t)-1, 0, (uid_t)-1) != 0 ||
			fchdir(runtime_self()->cwd_fd) != 0 ||
			(bits >= 0 && prctl(PR_SET_SECUREBITS, bits) != 0)) {
			fprintf(stderr, "e2b-local-backend: cannot become root again in its own directory\n");
			abort();
		}
		prctl(PR_SET_DUMPABLE, 1);
		errno = e;
	}
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		close(go[0]);
		close(go[1]);
		return err_set(err, 500, "%s", strerror(e));
	}
	close(p[1]);
	close(go[0]);
	rt->init_pid = pid;
	/* Its maps and (v1) cgroups before it runs anything (a child with
	 * another effective uid may not move itself into a cgroup). */
	int rc = runtime_clone_open_namespaces(rt);
	if (rc == 0)
		rc = runtime_userns_write_maps(rt->init_pid, rt->ids.base, rt->ids.base, rt->ids.count);
	if (rc == 0 && cgroup_fd < 0)
		rc = runtime_cgroup_attach(&rt->cg, pid);
	if (rc == 0)
		rc = runtime_spawn_sockets(rt, served);
	if (rc == 0 && say_go(go[1], served) != 0)
		rc = -1;
	int e = errno;
	close(go[1]);
	if (served[0] >= 0) {
		close(served[0]);
		close(served[1]);
	}
	if (rc != 0) {
		close(p[0]);
		return err_set(err, 500, "cannot set up the init's user namespace: %s", strerror(e));
	}
	rt->report_fd = p[0];
	return 0;
}

int runtime_clone_await(struct sandbox_rt *rt, struct err *err)
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
	return err_set(err, 500, "%s", got ? buf : "init did not start");
}
