/* Removing a sandbox: its init is killed at once (the kernel then kills its
 * whole pid namespace); a cleaner thread (lib/worker.h) waits for its
 * cgroups to empty (or, rootless, for the init to be dead), unmounts its
 * overlay, template and disk (the loop device then detaches) and deletes its
 * directory with the disk's image, off the event loop, so a tree of 200,000
 * files never stalls other clients. Its id range is free again once the
 * cleaner has finished with it.
 *
 * A thread, not a forked process: a fork copies the backend's page tables
 * and, while the copy lives, turns every page the backend writes into a
 * copy-on-write fault with a TLB shootdown on each CPU its threads ran on;
 * under a paging-based hypervisor that cost more CPU than the cleaning
 * itself (docs/PERFORMANCE.md, "Sandbox inits and removals without a copy
 * of the backend"). Removals run one at a time, in the order they were
 * asked for. */
#define _GNU_SOURCE
#include "runtime/runtime_remove.h"

#include "lib/tree_remove.h"
#include "lib/worker.h"
#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_overlay.h"
#include "runtime/runtime_spawn.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The cleaner's thread yields to the loop's (nice, per thread on Linux). */
#define CLEANER_NICE 10

/* A removal asked for: the sandbox's runtime state without its
 * descriptors (closed at once, so nothing of the backend keeps its mounts
 * busy) and its directory. */
struct removal {
	struct removal *next;
	char *dir;
	struct sandbox_rt *rt; /* NULL: a sandbox without a runtime (isolation none) */
	int id_slot;           /* given back when the cleaner is done */
};

static struct {
	struct worker *worker;
	struct removal *head, *tail; /* waiting, oldest first */
	struct removal *running;
} cl;

/* Signals the init through its pidfd: its pid names another process once
 * it has ended and been reaped (the loop's SIGCHLD handler reaps every
 * child), possibly another sandbox's init (runtime_clone.c). Without a
 * pidfd (a start that failed right after the clone) the pid is still its
 * own: it waited for its go. */
static void signal_init(const struct sandbox_rt *rt, int sig)
{
	if (rt->init_pidfd >= 0)
		syscall(SYS_pidfd_send_signal, rt->init_pidfd, sig, NULL, 0);
	else if (rt->init_pid > 0)
		kill(rt->init_pid, sig);
}

/* Without cgroups (rootless): the init, once dead (a zombie or reaped),
 * has taken every process of its pid namespace with it. Its pidfd turns
 * readable then. */
static void wait_init_dead(const struct sandbox_rt *rt)
{
	if (rt->init_pidfd >= 0) {
		struct pollfd dead = {.fd = rt->init_pidfd, .events = POLLIN};
		while (poll(&dead, 1, 10000) < 0 && errno == EINTR)
			;
		return;
	}
	if (rt->init_pid <= 0)
		return;
	pid_t pid = rt->init_pid;
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
	if (rt->cg.dir[0])
		runtime_cgroup_drain(&rt->cg); /* normally empty already: init's death killed them all */
	else
		wait_init_dead(rt);
	if (dir) {
		runtime_overlay_unmount(rt, dir);
		runtime_disk_release(dir, &rt->disk);
	}
}

static void clean(struct removal *r)
{
	if (r->rt)
		unmount_all(r->rt, r->dir);
	if (r->dir && tree_remove(r->dir) != 0)
		fprintf(stderr, "sandbox directory %s: could not delete it completely\n", r->dir);
}

static void removal_free(struct removal *r)
{
	runtime_ids_release(r->id_slot);
	runtime_state_free(r->rt);
	free(r->dir);
	free(r);
}

static void clean_work(void *arg)
{
	clean(arg);
}

static void next_removal(void);

static void clean_done(void *arg)
{
	cl.running = NULL;
	removal_free(arg);
	next_removal();
}

static void next_removal(void)
{
	struct removal *r = cl.head;
	if (cl.running || !r)
		return;
	cl.head = r->next;
	if (!cl.head)
		cl.tail = NULL;
	cl.running = r;
	if (worker_run(cl.worker, clean_work, clean_done, r) != 0) {
		clean(r); /* cannot happen (nothing else runs on it); never leave anything */
		clean_done(r);
	}
}

void runtime_wait_cleaners(void)
{
	/* Blocking is right here: nothing of a sandbox may outlive the backend. */
	while (cl.running)
		worker_drain(cl.worker); /* each done starts the next */
}

void runtime_sandbox_remove(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (rt) {
		/* Frozen tasks do not die until thawed (v1; v2 kills them all now).
		 * Killing init makes the kernel kill every process of its pid
		 * namespace. */
		runtime_cgroup_kill(&rt->cg);
		signal_init(rt, SIGKILL);
		/* The cleaner needs paths only, and the pidfd (which holds nothing
		 * busy) to know when the init is dead. */
		int pidfd = rt->init_pidfd;
		rt->init_pidfd = -1;
		runtime_state_close_fds(rt);
		rt->init_pidfd = pidfd;
	}
	sb->rt = NULL;
	if (!cl.worker) {
		/* A finished removal is the loop's last concern: the base's lowest
		 * priority. */
		int priorities = event_base_get_npriorities(runtime_self()->base);
		cl.worker =
			worker_new(runtime_self()->base, priorities > 1 ? priorities - 1 : 0, CLEANER_NICE);
	}
	struct removal *r = calloc(1, sizeof *r);
	if (r && (!sb->dir || (r->dir = strdup(sb->dir)))) {
		r->rt = rt;
		r->id_slot = rt ? rt->ids.slot : -1;
		if (cl.worker) {
			if (cl.tail)
				cl.tail->next = r;
			else
				cl.head = r;
			cl.tail = r;
			next_removal();
			return;
		}
	}
	/* No cleaner: do it here, blocking, rather than leave anything. */
	if (r)
		free(r->dir);
	free(r);
	if (rt) {
		unmount_all(rt, sb->dir);
		runtime_ids_release(rt->ids.slot);
	}
	if (sb->dir)
		tree_remove(sb->dir);
	runtime_state_free(rt);
}

void runtime_sandbox_stop(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt || (rt->kept && rt->init_pid <= 0))
		return; /* cold already */
	runtime_cgroup_kill(&rt->cg);
	signal_init(rt, SIGKILL);
	if (rt->cg.dir[0])
		runtime_cgroup_drain(&rt->cg);
	else
		wait_init_dead(rt);
	/* Reaped by its pidfd: this init, or nothing if the loop has already
	 * (ECHILD), never a process that took its pid since. */
	siginfo_t info;
	if (rt->init_pidfd >= 0)
		while (waitid(P_PIDFD, (id_t)rt->init_pidfd, &info, WEXITED) < 0 && errno == EINTR)
			;
	else if (rt->init_pid > 0)
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
	runtime_state_no_fds(cold);
	cold->disk.loop = -1;
	cold->ids = ids;
	cold->kept = true;
	cold->rebase = rebase;
	sb->rt = cold;
}

void runtime_state_no_fds(struct sandbox_rt *rt)
{
	runtime_cgroup_none(&rt->cg);
	for (int i = 0; i < RT_NNS; i++)
		rt->ns_fd[i] = -1;
	rt->init_pidfd = rt->root_fd = rt->report_fd = rt->req_fd = rt->ev_fd = -1;
	rt->ev_watch = NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void runtime_state_close_fds(struct sandbox_rt *rt)
{
	runtime_cgroup_close(&rt->cg);
	runtime_spawn_close(rt);
	for (int i = 0; i < RT_NNS; i++)
		close_fd(&rt->ns_fd[i]);
	close_fd(&rt->init_pidfd);
	close_fd(&rt->root_fd);
	close_fd(&rt->report_fd);
}

void runtime_state_free(struct sandbox_rt *rt)
{
	if (!rt)
		return;
	runtime_state_close_fds(rt);
	runtime_cgroup_free(&rt->cg);
	free(rt->rootfs);
	free(rt);
}
