/* User namespaces and idmapped mounts (runtime_userns.h). */
#define _GNU_SOURCE
#include "runtime/runtime_userns.h"

#include "lib/child_stack.h"
#include "runtime/runtime_control.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int runtime_userns_write_maps(pid_t pid, uid_t uid_base, gid_t gid_base, unsigned long count)
{
	char dir[32], uid_map[64], gid_map[64];
	snprintf(dir, sizeof dir, "/proc/%d", (int)pid);
	snprintf(uid_map, sizeof uid_map, "0 %lu %lu\n", (unsigned long)uid_base, count);
	snprintf(gid_map, sizeof gid_map, "0 %lu %lu\n", (unsigned long)gid_base, count);
	if (runtime_write_at(dir, "uid_map", uid_map) != 0 || runtime_write_at(dir, "gid_map", gid_map) != 0)
		return -1;
	return 0;
}

/* The child of runtime_userns_new: exists until its pipe's write end closes. */
static int userns_child(void *arg)
{
	int fd = *(const int *)arg;
	/* Only its own pipe's read end: a copy of another thread's write end
	 * (two of these made at once, on the loop and on the warm pool's
	 * worker) would keep that child from its EOF, and the two children, and
	 * their waitpids, would wait for each other for ever. */
	if (fd > 0)
		close_range(0, (unsigned int)fd - 1, 0);
	close_range((unsigned int)fd + 1, ~0U, 0);
	char c;
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

#define USERNS_CHILD_STACK (64 * 1024)

int runtime_userns_new(uid_t uid_base, gid_t gid_base, unsigned long count)
{
	/* The child only has to exist while its map is written and its
	 * namespace opened: the descriptor then keeps the namespace alive. It
	 * shares the backend's memory (CLONE_VM) on a stack of the thread's
	 * own, free again once it has been reaped below: a copy of the backend
	 * would cost its page tables and a copy-on-write fault for every page
	 * the backend wrote afterwards (docs/PERFORMANCE.md, "Sandbox inits and
	 * removals without a copy of the backend"). It writes nothing but that
	 * stack; errno is the one thing it shares, and it ends either way. */
	static __thread char *stack;
	char *top = child_stack_top(&stack, USERNS_CHILD_STACK);
	if (!top)
		return -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	/* No exit signal: a "clone" child, which the event loop's
	 * waitpid(-1, WNOHANG) never reaps, so this one may be made on the
	 * warm pool's worker thread (runtime_sandbox_build) and reaped here.
	 * Every signal blocked: no handler of the backend's runs in it. */
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
#ifdef __SANITIZE_THREAD__
	int flags = CLONE_NEWUSER; /* TSan cannot follow a CLONE_VM child */
#else
	int flags = CLONE_NEWUSER | CLONE_VM;
#endif
	pid_t pid = clone(userns_child, top, flags, &p[0]);
	int e = errno, fd = -1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid > 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
		if (runtime_userns_write_maps(pid, uid_base, gid_base, count) == 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		e = errno;
	}
	close(p[0]);
	close(p[1]); /* the child reads EOF and exits */
	if (pid > 0)
		while (waitpid(pid, NULL, __WCLONE) < 0 && errno == EINTR)
			;
	errno = e;
	return fd;
}

int runtime_userns_mount_lower(const char *source, int userns_fd, int dir_fd, const char *target)
{
	int tree = open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return -1;
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	if (userns_fd >= 0) {
		attr.attr_set |= MOUNT_ATTR_IDMAP;
		attr.userns_fd = (unsigned long long)userns_fd;
	}
	int rc = mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr);
	if (rc == 0)
		rc = move_mount(tree, "", dir_fd, target, MOVE_MOUNT_F_EMPTY_PATH);
	int e = errno;
	close(tree);
	errno = e;
	return rc;
}
