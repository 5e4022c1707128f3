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
	struct socket_request r = {.ns_fd = sandbox_ns(sb->rt, RT_NS_NET),
		.domain = domain,
		.type = type,
		.protocol = protocol,
		.fd = -1};
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
