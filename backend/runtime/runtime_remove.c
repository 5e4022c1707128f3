/* Removing a sandbox: its init is killed at once (the kernel then kills its
 * whole pid namespace); a forked cleaner waits for its cgroups to empty (or,
 * rootless, for the init to be dead), unmounts its overlay, template and disk
 * (the loop device then detaches) and deletes its directory with the disk's
 * image, off the event loop, so a tree of 200,000 files never stalls other
 * clients. Its id range is free again once the cleaner has finished. */
#define _GNU_SOURCE
#include "runtime/runtime_remove.h"

#include "lib/child_fds.h"
#include "lib/tree_remove.h"
#include "registry/registry.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_overlay.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A removal in progress: a forked cleaner holding the write end of a pipe. */
struct cleaner {
	struct cleaner *next;
	pid_t pid;
	int fd;
	int id_slot; /* given back when the cleaner is done */
	struct event *ev;
};
static struct cleaner *cleaners;
static void on_cleaner_done(evutil_socket_t fd, short what, void *arg);

static void cleaner_wait(struct cleaner *c)
{
	char buf[16];
	while (read(c->fd, buf, sizeof buf) > 0 || errno == EINTR)
		;
}

static void cleaner_free(struct cleaner *c)
{
	for (struct cleaner **pp = &cleaners; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->ev)
		event_free(c->ev);
	close(c->fd);
	runtime_ids_release(c->id_slot);
	free(c);
}


void runtime_wait_cleaners(void)
{
	/* Blocking is right here: nothing of a sandbox may outlive the backend. */
	while (cleaners) {
		int flags = fcntl(cleaners->fd, F_GETFL);
		fcntl(cleaners->fd, F_SETFL, flags & ~O_NONBLOCK);
		cleaner_wait(cleaners);
		cleaner_free(cleaners);
	}
}


static void on_cleaner_done(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct cleaner *c = arg;
	char buf[16];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	cleaner_free(c);
}

/* Without cgroups (rootless): the init, once dead (a zombie or reaped),
 * has taken every process of its pid namespace with it. */
static void wait_init_dead(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	for (int tries = 0; tries < 2000; tries++) {
		char text[512] = "";
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		ssize_t n = read(fd, text, sizeof text - 1);
		close(fd);
		const char *state = n > 0 ? strrchr(text, ')') : NULL;
		if (!state || state[1] == '\0' || state[2] == 'Z' || state[2] == 'X')
			return;
		runtime_sleep_ms(5);
	}
}

/* Waits for the sandbox's processes to be gone, then unmounts; dir's disk
 * last (the image itself goes with dir). */
static void unmount_all(struct sandbox_rt *rt, const char *dir)
{
	const char *dirs[RT_NCTRL];
	for (int i = 0; i < RT_NCTRL; i++)
		dirs[i] = rt->cg[i];
	if (rt->cg[0])
		runtime_drain_cgroup(dirs); /* normally empty already: init's death killed them all */
	else if (rt->init_pid > 0)
		wait_init_dead(rt->init_pid);
	if (dir) {
		runtime_overlay_unmount(rt, dir);
		runtime_disk_release(dir, &rt->disk);
	}
}

/* In the forked cleaner: unmounts and deletes. Never returns. */
__attribute__((noreturn)) static void clean(const char *dir, struct sandbox_rt *rt)
{
	if (rt)
		unmount_all(rt, dir);
	int rc = dir ? tree_remove(dir) : 0;
	if (rc != 0)
		dprintf(2, "sandbox directory %s: could not delete it completely\n", dir);
	_exit(rc == 0 ? 0 : 1);
}

void runtime_sandbox_remove(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (rt) {
		/* Frozen tasks do not die until thawed. Killing init makes the kernel
		 * kill every process of its pid namespace. */
		if (rt->cg[RT_FREEZER])
			runtime_write_at(rt->cg[RT_FREEZER], "freezer.state", "THAWED");
		if (rt->init_pid > 0)
			kill(rt->init_pid, SIGKILL);
	}
	struct cleaner *c = calloc(1, sizeof *c);
	int p[2] = {-1, -1};
	pid_t pid = -1;
	if (c && pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0)
		pid = fork();
	if (pid == 0) {
		if (child_fds(p[1]) != 0)
			_exit(1);
		prctl(PR_SET_NAME, "e2b-sbx-clean");
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		clean(sb->dir, rt);
	}
	if (pid < 0) {
		/* No cleaner: do it here, blocking, rather than leave anything. */
		if (p[0] >= 0) {
			close(p[0]);
			close(p[1]);
		}
		free(c);
		if (rt) {
			unmount_all(rt, sb->dir);
			if (sb->dir)
				tree_remove(sb->dir);
			runtime_ids_release(rt->ids.slot);
		} else if (sb->dir) {
			tree_remove(sb->dir);
		}
	} else {
		close(p[1]);
		c->pid = pid;
		c->id_slot = rt ? rt->ids.slot : -1;
		c->fd = p[0];
		c->ev = event_new(rt_g.base, p[0], EV_READ | EV_PERSIST, on_cleaner_done, c);
		if (c->ev)
			event_add(c->ev, NULL);
		c->next = cleaners;
		cleaners = c;
	}
	runtime_state_free(rt);
	sb->rt = NULL;
}

void runtime_sandbox_stop(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt || (rt->kept && rt->init_pid <= 0))
		return; /* cold already */
	if (rt->cg[RT_FREEZER])
		runtime_write_at(rt->cg[RT_FREEZER], "freezer.state", "THAWED");
	if (rt->init_pid > 0)
		kill(rt->init_pid, SIGKILL);
	const char *dirs[RT_NCTRL];
	for (int i = 0; i < RT_NCTRL; i++)
		dirs[i] = rt->cg[i];
	if (rt->cg[0])
		runtime_drain_cgroup(dirs);
	else if (rt->init_pid > 0)
		wait_init_dead(rt->init_pid);
	if (rt->init_pid > 0)
		while (waitpid(rt->init_pid, NULL, 0) < 0 && errno == EINTR)
			;
	runtime_overlay_unmount(rt, sb->dir);
	/* A plain unmount: what the sandbox wrote is written out and kept. */
	if (rt->disk.mounted) {
		char mnt[4096];
		snprintf(mnt, sizeof mnt, "%s/" RUNTIME_DISK_MOUNT, sb->dir);
		if (umount2(mnt, 0) != 0)
			umount2(mnt, MNT_DETACH);
	}
	/* Cold again: only the id range stays taken. */
	struct runtime_ids ids = rt->ids;
	bool rebase = rt->rebase;
	rt->ids.slot = -1;
	runtime_state_free(rt);
	sb->rt = NULL;
	struct sandbox_rt *cold = calloc(1, sizeof *cold);
	if (!cold) {
		runtime_ids_release(ids.slot);
		return;
	}
	cold->root_fd = -1;
	cold->report_fd = -1;
	cold->disk.loop = -1;
	for (int i = 0; i < RT_NCTRL; i++)
		cold->procs_fd[i] = -1;
	cold->ids = ids;
	cold->kept = true;
	cold->rebase = rebase;
	sb->rt = cold;
}

void runtime_state_free(struct sandbox_rt *rt)
{
	if (!rt)
		return;
	for (int i = 0; i < RT_NCTRL; i++) {
		if (rt->procs_fd[i] >= 0)
			close(rt->procs_fd[i]);
		free(rt->cg[i]);
	}
	if (rt->root_fd >= 0)
		close(rt->root_fd);
	if (rt->report_fd >= 0)
		close(rt->report_fd);
	free(rt->rootfs);
	free(rt);
}
