/* The sandboxes' cgroups on cgroup v2 (runtime_cgroup_v2.h). */
#define _GNU_SOURCE
#include "runtime/runtime_cgroup_v2.h"

/* Paths here are built into fixed buffers; one that would not fit is cut
 * and then simply not found. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/err.h"
#include "runtime/runtime_cgroup_enter.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_devices.h"
#include "runtime/runtime_state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FREEZE_WAIT_MS 5000 /* a task in uninterruptible sleep freezes only when it wakes */
#define EMPTY_WAIT_MS 10000

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int runtime_cgroup_v2_wait(const char *dir, const char *key, uint64_t value, int timeout_ms)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/cgroup.events", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	long deadline = now_ms() + timeout_ms;
	int rc = -1, err = ETIMEDOUT;
	for (;;) {
		/* Reading the file re-arms its notification: read, then poll. */
		char text[256];
		ssize_t n = pread(fd, text, sizeof text - 1, 0);
		if (n < 0) {
			err = errno;
			break;
		}
		text[n] = '\0';
		uint64_t v;
		if (runtime_cgroup_keyed(text, key, &v) == 0 && v == value) {
			rc = 0;
			break;
		}
		long left = deadline - now_ms();
		if (left <= 0)
			break;
		struct pollfd p = {.fd = fd, .events = POLLPRI};
		if (poll(&p, 1, (int)(left < 100 ? left : 100)) < 0 && errno != EINTR) {
			err = errno;
			break;
		}
	}
	close(fd);
	errno = err;
	return rc;
}

/* cgroup.kill (Linux 5.14); on an older kernel, SIGKILL to each process
 * listed, until none is. */
static void kill_all(const char *dir)
{
	if (runtime_write_at(dir, "cgroup.kill", "1") == 0 || errno != ENOENT)
		return;
	for (int tries = 0; tries < 2000; tries++) {
		char procs[4096];
		if (runtime_read_at(dir, "cgroup.procs", procs, sizeof procs) != 0 || !procs[0])
			return;
		for (char *p = procs; *p;) {
			char *end;
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid > 0)
				kill((pid_t)pid, SIGKILL);
			p = end;
		}
		runtime_sleep_ms(5);
	}
}

/* Kills everything in dir, waits until it is empty, removes it. */
static void drain_dir(const char *dir)
{
	kill_all(dir);
	if (runtime_cgroup_v2_wait(dir, "populated", 0, EMPTY_WAIT_MS) != 0 && errno != ENOENT)
		fprintf(stderr, "e2b-local-backend: cgroup %s: still not empty after %d ms\n", dir,
			EMPTY_WAIT_MS);
	/* "populated 0" comes as the last task exits; the cgroup may stay busy
	 * a moment longer. */
	for (int tries = 0; tries < 400 && rmdir(dir) != 0 && errno == EBUSY; tries++)
		runtime_sleep_ms(5);
}

/* <home>/b<pid> of backends that are gone: each sandbox's group and the
 * backend's own leaf, then the group. */
static void clean_stale(bool (*alive)(pid_t pid))
{
	const char *home = runtime_self()->cgroups.home;
	DIR *d = opendir(home);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char *end;
		if (e->d_name[0] != 'b')
			continue;
		long owner = strtol(e->d_name + 1, &end, 10);
		if (*end || owner <= 0 || owner > INT_MAX || owner == (long)runtime_self()->cgroups.owner ||
			alive((pid_t)owner))
			continue;
		fprintf(stderr, "e2b-local-backend: removing cgroups left by backend %ld\n", owner);
		char group[PATH_MAX];
		snprintf(group, sizeof group, "%s/%s", home, e->d_name);
		DIR *sd = opendir(group);
		struct dirent *s;
		while (sd && (s = readdir(sd)) != NULL) {
			if (s->d_name[0] == '.' || (s->d_type != DT_DIR && s->d_type != DT_UNKNOWN))
				continue;
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%s/%s", group, s->d_name);
			drain_dir(dir);
		}
		if (sd)
			closedir(sd);
		rmdir(group);
	}
	if (d)
		closedir(d);
}

static int v2_init(bool full, bool (*alive)(pid_t pid), struct err *err)
{
	runtime_self()->cgroups.devices_prog = -1;
	if (runtime_cgroup_enter(full, err) != 0)
		return -1;
	clean_stale(alive);
	if (full) {
		runtime_self()->cgroups.devices_prog = runtime_devices_load(err);
		if (runtime_self()->cgroups.devices_prog < 0)
			return -1;
		runtime_self()->cgroups.devices = "bpf";
	}
	/* Rootless: no program (loading one needs CAP_BPF or CAP_SYS_ADMIN over
	 * the machine); the user namespace opens no device node of the
	 * template's (runtime_devices.h's list is the init's own binds). */
	return 0;
}

static void v2_shutdown(void)
{
	struct runtime_cgroups *cgs = &runtime_self()->cgroups;
	if (cgs->devices_prog >= 0)
		close(cgs->devices_prog);
	cgs->devices_prog = -1;
	/* Its leaf can go only once the backend is out of it: possible from
	 * the root cgroup alone, which may hold processes beside its
	 * children. Elsewhere the leaf stays (empty once the backend has
	 * exited) until the delegated cgroup goes, or the next backend there
	 * removes it. */
	if (cgs->started && cgs->parent[0] && runtime_write_at(cgs->started, "cgroup.procs", "0") == 0) {
		char leaf[PATH_MAX];
		snprintf(leaf, sizeof leaf, "%s/backend", cgs->parent[0]);
		rmdir(leaf);
		rmdir(cgs->parent[0]);
	}
	free(cgs->parent[0]);
	free(cgs->home);
	free(cgs->started);
	cgs->parent[0] = cgs->home = cgs->started = NULL;
	cgs->entered = false;
}

static int v2_make(struct runtime_cgroup *cg, const char *id, int memory_mb, int cpu_count)
{
	const struct runtime_cgroups *cgs = &runtime_self()->cgroups;
	char text[64];
	cg->dir[0] = malloc(strlen(cgs->parent[0]) + strlen(id) + 2);
	if (!cg->dir[0])
		return -1;
	sprintf(cg->dir[0], "%s/%s", cgs->parent[0], id);
	const char *dir = cg->dir[0];
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -1;
	if (cgs->memory) {
		snprintf(text, sizeof text, "%lld", (long long)memory_mb * 1024 * 1024);
		if (runtime_write_at(dir, "memory.max", text) != 0)
			return -1;
		/* No swap beyond it (a kernel without swap accounting has no file). */
		if (runtime_write_at(dir, "memory.swap.max", "0") != 0 && errno != ENOENT)
			return -1;
	}
	if (cgs->pids) {
		snprintf(text, sizeof text, "%d", SANDBOX_PIDS_MAX);
		if (runtime_write_at(dir, "pids.max", text) != 0)
			return -1;
	}
	if (cgs->cpu) {
		snprintf(text, sizeof text, "%d 100000", cpu_count * 100000);
		if (runtime_write_at(dir, "cpu.max", text) != 0)
			return -1;
	}
	/* Not O_PATH: bpf(2) takes no such descriptor (clone3 would). */
	cg->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0)
		return -1;
	if (cgs->devices_prog >= 0 && runtime_devices_attach(cgs->devices_prog, cg->dir_fd) != 0)
		return -1;
	if (cgs->pids) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/pids.current", dir);
		cg->pids_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (cg->pids_fd < 0)
			return -1;
	}
	return 0;
}

static int v2_freeze(const struct runtime_cgroup *cg, bool frozen)
{
	if (runtime_write_at(cg->dir[0], "cgroup.freeze", frozen ? "1" : "0") != 0)
		return -1;
	/* Frozen once every task has stopped: nothing runs after the pause
	 * has been answered. */
	return runtime_cgroup_v2_wait(cg->dir[0], "frozen", frozen ? 1 : 0, FREEZE_WAIT_MS);
}

/* A frozen task dies of SIGKILL on v2: no thaw first. */
static void v2_kill(const struct runtime_cgroup *cg)
{
	kill_all(cg->dir[0]);
}

static void v2_drain(const struct runtime_cgroup *cg)
{
	drain_dir(cg->dir[0]);
}

static int v2_usage(const struct runtime_cgroup *cg, struct runtime_cgroup_usage *out)
{
	char cpu[1024], memory[64], stat[8192];
	uint64_t usec;
	if (!runtime_self()->cgroups.memory ||
		runtime_read_at(cg->dir[0], "cpu.stat", cpu, sizeof cpu) != 0 ||
		runtime_cgroup_keyed(cpu, "usage_usec", &usec) != 0 ||
		runtime_read_at(cg->dir[0], "memory.current", memory, sizeof memory) != 0 ||
		runtime_read_at(cg->dir[0], "memory.stat", stat, sizeof stat) != 0)
		return -1;
	char *end;
	errno = 0;
	out->memory = strtoull(memory, &end, 10);
	if (end == memory || errno)
		return -1;
	out->cpu_ns = usec * 1000;
	/* "file": the page cache, tmpfs and shared memory included (as v1's total_cache). */
	if (runtime_cgroup_keyed(stat, "file", &out->cache) != 0)
		out->cache = 0;
	return 0;
}

const struct runtime_cgroup_ops runtime_cgroup_v2_ops = {
	.init = v2_init,
	.shutdown = v2_shutdown,
	.make = v2_make,
	.freeze = v2_freeze,
	.kill = v2_kill,
	.drain = v2_drain,
	.usage = v2_usage,
};
