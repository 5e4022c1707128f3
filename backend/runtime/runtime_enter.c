/* Entering a sandbox (runtime_enter.h): paths resolved beneath its root,
 * sockets in its network namespace, and the steps a forked child takes to
 * become a process of the sandbox (cgroups, namespaces, syscall policy,
 * capabilities, user). */
#define _GNU_SOURCE
#include "runtime/runtime_enter.h"

#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_seccomp.h"
#include "runtime/runtime_state.h"
#include "runtime/runtime_users.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
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

/* The init's namespace `which` (RT_NS_*), opened when it was cloned
 * (runtime_clone.c): joined through that descriptor, never by the init's
 * pid, which names another process once the init has died and been reaped.
 * -1 with ESRCH when the sandbox has none (it is not running). */
static int sandbox_ns(const struct sandbox_rt *rt, int which)
{
	if (rt->ns_fd[which] < 0)
		errno = ESRCH;
	return rt->ns_fd[which];
}

struct socket_request {
	int ns_fd, domain, type, protocol;
	int fd, err;
};

/* A thread of its own: setns() moves only the calling thread, which then
 * ends. (Switching the backend's one thread there and back would need
 * CAP_SYS_ADMIN over the host's network namespace, which rootless lacks.) */
static void *socket_in_ns(void *arg)
{
	struct socket_request *r = arg;
	r->fd = -1;
	if (setns(r->ns_fd, CLONE_NEWNET) == 0)
		r->fd = socket(r->domain, r->type | SOCK_CLOEXEC, r->protocol);
	r->err = errno;
	return NULL;
}

int runtime_socket(const struct sandbox *sb, int domain, int type, int protocol)
{
	if (!sb->rt)
		return socket(domain, type | SOCK_CLOEXEC, protocol);
	struct socket_request r = {.ns_fd = sandbox_ns(sb->rt, RT_NS_NET), .domain = domain,
		.type = type, .protocol = protocol, .fd = -1};
	if (r.ns_fd < 0)
		return -1;
	/* A socket belongs to the namespace it was made in, for good. */
	pthread_t t;
	int rc = pthread_create(&t, NULL, socket_in_ns, &r);
	if (rc == 0)
		pthread_join(t, NULL);
	else
		r.err = rc;
	errno = r.err;
	return r.fd;
}

struct netns_call {
	int ns_fd;
	int (*fn)(void *arg);
	void *arg;
	int rc, err;
};

static void *call_in_ns(void *arg)
{
	struct netns_call *c = arg;
	c->rc = -1;
	if (setns(c->ns_fd, CLONE_NEWNET) == 0)
		c->rc = c->fn(c->arg);
	c->err = errno;
	return NULL;
}

int runtime_in_netns(const struct sandbox *sb, int (*fn)(void *arg), void *arg)
{
	if (!sb->rt) {
		errno = ENOTSUP;
		return -1;
	}
	struct netns_call c = {.ns_fd = sandbox_ns(sb->rt, RT_NS_NET), .fn = fn, .arg = arg};
	if (c.ns_fd < 0)
		return -1;
	pthread_t t;
	int rc = pthread_create(&t, NULL, call_in_ns, &c);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	pthread_join(t, NULL);
	errno = c.err;
	return c.rc;
}

int runtime_fork_cgroup_fd(const struct sandbox *sb)
{
	return sb->rt ? runtime_cgroup_clone_fd(&sb->rt->cg) : -1;
}

int runtime_sandbox_init_fd(const struct sandbox *sb)
{
	return sb->rt ? sb->rt->init_pidfd : -1;
}

bool runtime_sandbox_alive(const struct sandbox *sb)
{
	/* The init's pidfd turns readable when it ends. */
	struct pollfd ended = {.fd = sb->rt ? sb->rt->init_pidfd : -1, .events = POLLIN};
	return ended.fd < 0 || poll(&ended, 1, 0) <= 0;
}

int runtime_fork_enter(const struct sandbox *sb)
{
	if (!sb->rt)
		return 0;
	/* cgroup v1 checks pids.max when a process of the sandbox forks, never
	 * when one is moved in, and the backend's children are moved in: a full
	 * sandbox gets no more. (On v2 the child starts in the cgroup, and the
	 * kernel refuses it there: clone3 fails with EAGAIN.) */
	if (!runtime_cgroup_checks_pids(&sb->rt->cg) && runtime_cgroup_pids(&sb->rt->cg) >= SANDBOX_PIDS_MAX) {
		errno = EAGAIN;
		return -1;
	}
	for (int i = 0; i < RT_NNS; i++)
		if (sandbox_ns(sb->rt, i) < 0)
			return -1; /* the child joins the others */
	/* An init that has ended (its pid namespace with it) takes no child:
	 * say so, rather than the ENOMEM clone() would give. */
	if (!runtime_sandbox_alive(sb)) {
		errno = ESRCH;
		return -1;
	}
	return setns(sb->rt->ns_fd[RT_NS_PID], CLONE_NEWPID);
}

int runtime_fork_leave(const struct sandbox *sb, pid_t child, bool joined)
{
	if (!sb->rt)
		return 0;
	/* v1: the child joins its cgroups itself before exec; a forked one may
	 * not have yet, and doing it here too means it is in them before anyone
	 * hears of it (the start event). Each write takes the kernel's cgroup
	 * migration lock. (v2: it was born in its cgroup.) */
	if (child > 0 && !joined)
		runtime_cgroup_attach(&sb->rt->cg, child);
	if (setns(runtime_self()->self_pid_ns, CLONE_NEWPID) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot return to its own pid namespace\n");
		abort();
	}
	/* The sandbox's own processes may have forked since the check in
	 * runtime_fork_enter: one moved in past the limit is taken back. */
	if (child > 0 && !runtime_cgroup_checks_pids(&sb->rt->cg) &&
	    runtime_cgroup_pids(&sb->rt->cg) > SANDBOX_PIDS_MAX) {
		kill(child, SIGKILL);
		errno = EAGAIN;
		return -1;
	}
	return 0;
}

/* Docker's default capability set without CAP_MKNOD (the devices cgroup
 * refuses the nodes it could make anyway): enough for sudo, chown, binding
 * low ports; not enough to mount, load modules, trace or reach raw devices. */
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
	if (runtime_cgroup_join(&rt->cg) != 0) /* v1 */
		return -1;
	/* A session keyring of its own: whatever the backend's session holds
	 * (a login links its user's keyring there) is none of the sandbox's. */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		return -1;
	/* Through the sandbox's descriptors (this child's copies are closed
	 * before exec; runtime_fork_enter checked they are open). The user
	 * namespace comes first: it owns the others, and joining it gives the
	 * capabilities the other setns() calls need there. The pid namespace is
	 * the parent's to join. */
	static const int types[RT_NS_PID] = {CLONE_NEWUSER, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS};
	for (int i = 0; i < RT_NS_PID; i++)
		if (setns(rt->ns_fd[i], types[i]) != 0)
			return -1;
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
	/* With a single id (rootless without subordinate ids) that id, 0, is
	 * every account's, and supplementary groups cannot be set. */
	if (runtime_self()->single_id)
		return syscall(SYS_setgid, 0) == 0 && syscall(SYS_setuid, 0) == 0 ? 0 : -1;
	if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) != 0 || syscall(SYS_setgid, u->gid) != 0 ||
	    syscall(SYS_setuid, u->uid) != 0)
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
