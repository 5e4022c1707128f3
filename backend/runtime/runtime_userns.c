/* User namespaces and idmapped mounts (runtime_userns.h). */
#define _GNU_SOURCE
#include "runtime/runtime_userns.h"

#include "runtime/runtime_cgroup.h"

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

int runtime_userns_new(uid_t uid_base, gid_t gid_base, unsigned long count)
{
	/* The child only has to exist while its map is written and its
	 * namespace opened: the descriptor then keeps the namespace alive. */
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	/* No exit signal: a "clone" child, which the event loop's
	 * waitpid(-1, WNOHANG) never reaps, so this one may be made on the
	 * warm pool's worker thread (runtime_sandbox_build) and reaped here. */
	long pid = syscall(SYS_clone, CLONE_NEWUSER, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		/* Only its own pipe's read end: a copy of another thread's write
		 * end (two of these made at once, on the loop and on the warm pool's
		 * worker) would keep that child from its EOF, and the two children,
		 * and their waitpids, would wait for each other for ever. */
		char c;
		if (p[0] > 0)
			close_range(0, (unsigned int)p[0] - 1, 0);
		close_range((unsigned int)p[0] + 1, ~0U, 0);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	int e = errno, fd = -1;
	close(p[0]);
	if (pid > 0) {
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/ns/user", pid);
		if (runtime_userns_write_maps((pid_t)pid, uid_base, gid_base, count) == 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		e = errno;
	}
	close(p[1]); /* the child reads EOF and exits */
	if (pid > 0)
		while (waitpid((pid_t)pid, NULL, __WCLONE) < 0 && errno == EINTR)
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
