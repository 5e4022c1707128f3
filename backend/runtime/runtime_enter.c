/* Entering a sandbox (runtime_enter.h): paths resolved beneath its root,
 * sockets in its network namespace, and the steps a forked child takes to
 * become a process of the sandbox (cgroups, namespaces, syscall policy,
 * capabilities, user). */
#define _GNU_SOURCE
#include "runtime/runtime_enter.h"

#include "registry/registry.h"
#include "runtime/runtime_seccomp.h"
#include "runtime/runtime_state.h"
#include "runtime/runtime_users.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *runtime_rootfs(const struct sandbox *sb)
{
	return sb->rt ? sb->rt->rootfs : "/";
}

/* Opens path beneath the sandbox's root: "..", absolute symbolic links and
 * absolute paths all stay inside it. */
int runtime_open_in_root(const struct sandbox *sb, const char *path, int flags)
{
	struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, sb->rt->root_fd, path, &how, sizeof how);
}

int runtime_path_is_dir(const struct sandbox *sb, const char *path)
{
	struct stat st;
	if (!sb->rt) {
		if (stat(path, &st) != 0)
			return -1;
		return S_ISDIR(st.st_mode) ? 1 : 0;
	}
	int fd = runtime_open_in_root(sb, path, O_PATH);
	if (fd < 0)
		return -1;
	int rc = fstat(fd, &st) == 0 ? (S_ISDIR(st.st_mode) ? 1 : 0) : -1;
	close(fd);
	return rc;
}

static int open_ns(pid_t pid, const char *ns)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int runtime_socket(const struct sandbox *sb, int domain, int type, int protocol)
{
	if (!sb->rt)
		return socket(domain, type | SOCK_CLOEXEC, protocol);
	int ns = open_ns(sb->rt->init_pid, "net");
	if (ns < 0)
		return -1;
	if (setns(ns, CLONE_NEWNET) != 0) {
		int e = errno;
		close(ns);
		errno = e;
		return -1;
	}
	close(ns);
	/* A socket belongs to the namespace it was made in, for good. */
	int s = socket(domain, type | SOCK_CLOEXEC, protocol);
	int e = errno;
	if (setns(rt_g.self_net_ns, CLONE_NEWNET) != 0) {
		/* The backend must never stay in a sandbox's network. */
		fprintf(stderr, "e2b-local-backend: cannot return to its own network namespace\n");
		abort();
	}
	errno = e;
	return s;
}

int runtime_fork_enter(const struct sandbox *sb)
{
	if (!sb->rt)
		return 0;
	int ns = open_ns(sb->rt->init_pid, "pid");
	if (ns < 0)
		return -1;
	int rc = setns(ns, CLONE_NEWPID);
	int e = errno;
	close(ns);
	errno = e;
	return rc;
}

void runtime_fork_leave(const struct sandbox *sb, pid_t child)
{
	if (!sb->rt)
		return;
	/* The child joins its cgroups itself before exec; doing it here too
	 * means it is in them before anyone hears of it (the start event). */
	if (child > 0) {
		char text[24];
		int n = snprintf(text, sizeof text, "%d", (int)child);
		for (int i = 0; i < RT_NCTRL; i++)
			if (write(sb->rt->procs_fd[i], text, (size_t)n) != n && errno != ESRCH)
				fprintf(stderr, "e2b-local-backend: cgroup %s: %s\n", rt_controllers[i], strerror(errno));
	}
	if (setns(rt_g.self_pid_ns, CLONE_NEWPID) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot return to its own pid namespace\n");
		abort();
	}
}

/* Docker's default capability set without CAP_MKNOD (there is no device
 * cgroup here): enough for sudo, chown, binding low ports; not enough to
 * mount, load modules, trace or reach raw devices. */
static bool cap_kept(int cap)
{
	switch (cap) {
	case CAP_CHOWN: case CAP_DAC_OVERRIDE: case CAP_FOWNER: case CAP_FSETID: case CAP_KILL:
	case CAP_SETGID: case CAP_SETUID: case CAP_SETPCAP: case CAP_NET_BIND_SERVICE:
	case CAP_NET_RAW: case CAP_SYS_CHROOT: case CAP_AUDIT_WRITE: case CAP_SETFCAP:
		return true;
	default:
		return false;
	}
}

int runtime_child_enter(const struct sandbox *sb, const struct sandbox_user *u)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt)
		return 0;
	for (int i = 0; i < RT_NCTRL; i++)
		if (write(rt->procs_fd[i], "0", 1) != 1)
			return -1;
	/* Open them all first: once in the sandbox's mount namespace, /proc is its own. */
	static const char *const names[] = {"uts", "ipc", "net", "mnt"};
	static const int types[] = {CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS};
	int fds[4];
	for (int i = 0; i < 4; i++) {
		fds[i] = open_ns(rt->init_pid, names[i]);
		if (fds[i] < 0)
			return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (setns(fds[i], types[i]) != 0)
			return -1;
		close(fds[i]);
	}
	if (chdir("/") != 0)
		return -1;
	/* While it still has CAP_SYS_ADMIN: then no NO_NEW_PRIVS is needed,
	 * and setuid sudo keeps working. */
	if (runtime_seccomp_apply() != 0)
		return -1;
	for (int cap = 0; cap <= 63; cap++) {
		if (cap_kept(cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
			return -1;
	}
	if (setgroups((size_t)u->ngroups, u->groups) != 0 || setgid(u->gid) != 0 ||
	    setuid(u->uid) != 0)
		return -1;
	return 0;
}

pid_t runtime_ns_pid(const struct sandbox *sb, pid_t host_pid)
{
	if (!sb || !sb->rt)
		return host_pid;
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)host_pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return host_pid;
	pid_t ns_pid = host_pid;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		char *last = strrchr(line, '\t');
		if (last)
			ns_pid = (pid_t)atoi(last + 1);
		break;
	}
	fclose(f);
	return ns_pid;
}
