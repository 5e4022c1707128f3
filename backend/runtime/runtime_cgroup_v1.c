/* The sandboxes' cgroups on cgroup v1 (runtime_cgroup_v1.h). */
#define _GNU_SOURCE
#include "runtime/runtime_cgroup_v1.h"

/* Paths here are built into fixed buffers; one that would not fit is cut
 * and then simply not found. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/err.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_devices.h"
#include "runtime/runtime_state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Makes dir (a devices cgroup without children) allow only the device
 * nodes a sandbox needs; groups made below it inherit that. */
static int restrict_devices(const char *dir)
{
	if (runtime_write_at(dir, "devices.deny", "a") != 0)
		return -1;
	for (size_t i = 0; i < runtime_devices_count; i++) {
		const struct runtime_device_rule *d = &runtime_devices_allowed[i];
		char rule[48];
		if (d->minor >= 0)
			snprintf(rule, sizeof rule, "%c %d:%d rwm", d->type, d->major, d->minor);
		else
			snprintf(rule, sizeof rule, "%c %d:* rwm", d->type, d->major);
		if (runtime_write_at(dir, "devices.allow", rule) != 0)
			return -1;
	}
	return 0;
}

/* SIGKILLs every process listed in dir's cgroup.procs; whether there was one. */
static bool kill_listed(const char *dir)
{
	char path[512];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool any = false;
	int pid;
	while (fscanf(f, "%d", &pid) == 1) {
		kill(pid, SIGKILL);
		any = true;
	}
	fclose(f);
	return any;
}

/* Kills everything in one sandbox's cgroups (all controllers) and removes
 * them (NULL entries skipped: a sandbox whose start failed half-way). */
static void drain_dirs(char *const dirs[RT_NCTRL])
{
	if (dirs[RT_FREEZER])
		runtime_write_at(dirs[RT_FREEZER], "freezer.state", "THAWED");
	for (int tries = 0; tries < 2000; tries++) {
		bool any = false;
		for (int i = 0; i < RT_NCTRL; i++)
			if (dirs[i] && kill_listed(dirs[i]))
				any = true;
		if (!any)
			break;
		runtime_sleep_ms(5);
	}
	for (int i = 0; i < RT_NCTRL; i++)
		if (dirs[i])
			rmdir(dirs[i]);
}

/* The groups of dead backend `group` (b<pid>) in every controller: each
 * sandbox's (named in any controller: one killed while its groups were
 * being made has some and not others), then the backend's own. */
static void clean_backend_groups(const char *group)
{
	for (int c = 0; c < RT_NCTRL; c++) {
		char inst[512];
		snprintf(inst, sizeof inst, CGROUP_ROOT "/%s/" CGROUP_GROUP "/%s", rt_controllers[c], group);
		DIR *sd = opendir(inst);
		struct dirent *s;
		while (sd && (s = readdir(sd)) != NULL) {
			if (s->d_name[0] == '.' || (s->d_type != DT_DIR && s->d_type != DT_UNKNOWN))
				continue;
			char paths[RT_NCTRL][512];
			char *dirs[RT_NCTRL];
			for (int i = 0; i < RT_NCTRL; i++) {
				snprintf(paths[i], sizeof paths[i], CGROUP_ROOT "/%s/" CGROUP_GROUP "/%s/%s",
					rt_controllers[i], group, s->d_name);
				dirs[i] = paths[i];
			}
			drain_dirs(dirs);
		}
		if (sd)
			closedir(sd);
	}
	for (int i = 0; i < RT_NCTRL; i++) {
		char path[512];
		snprintf(path, sizeof path, CGROUP_ROOT "/%s/" CGROUP_GROUP "/%s", rt_controllers[i], group);
		rmdir(path);
	}
}

/* Cgroups under /sys/fs/cgroup/<ctrl>/e2b-local/b<pid> of backends that are
 * gone, found in any controller. */
static void clean_stale(bool (*alive)(pid_t pid))
{
	for (int c = 0; c < RT_NCTRL; c++) {
		char base[256];
		snprintf(base, sizeof base, CGROUP_ROOT "/%s/" CGROUP_GROUP, rt_controllers[c]);
		DIR *d = opendir(base);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] != 'b')
				continue;
			pid_t owner = (pid_t)atoi(e->d_name + 1);
			if (owner <= 0 || owner == runtime_self()->cgroups.owner || alive(owner))
				continue;
			fprintf(stderr, "e2b-local-backend: removing cgroups left by backend %d\n",
				(int)owner);
			clean_backend_groups(e->d_name);
		}
		closedir(d);
	}
}

static int make_parents(struct err *err)
{
	for (int i = 0; i < RT_NCTRL; i++) {
		char path[256];
		snprintf(path, sizeof path, CGROUP_ROOT "/%s/" CGROUP_GROUP, rt_controllers[i]);
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			goto fail;
		snprintf(path, sizeof path, CGROUP_ROOT "/%s/" CGROUP_GROUP "/b%d", rt_controllers[i],
			(int)runtime_self()->cgroups.owner);
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			goto fail;
		runtime_self()->cgroups.parent[i] = strdup(path);
		if (!runtime_self()->cgroups.parent[i])
			goto fail;
		/* Once here, for every sandbox group made below (they inherit it). */
		if (i == RT_DEVICES && restrict_devices(path) != 0)
			return err_set(err, errno, "cannot restrict devices in cgroup %s: %s", path,
				strerror(errno));
		continue;
	fail:
		return err_set(err, errno, "cannot create cgroup %s: %s", path, strerror(errno));
	}
	return 0;
}

static int v1_init(bool full, bool (*alive)(pid_t pid), struct err *err)
{
	(void)full; /* runtime_cgroup_init asks only with full isolation */
	for (int i = 0; i < RT_NCTRL; i++) {
		char path[256];
		snprintf(path, sizeof path, CGROUP_ROOT "/%s/cgroup.procs", rt_controllers[i]);
		if (access(path, W_OK) != 0)
			return err_set(err, errno, "no writable cgroup v1 controller %s (%s)",
				rt_controllers[i], path);
	}
	runtime_self()->cgroups.owner = getpid();
	clean_stale(alive);
	if (make_parents(err) != 0)
		return -1;
	runtime_self()->cgroups.memory = runtime_self()->cgroups.pids = runtime_self()->cgroups.cpu = true;
	runtime_self()->cgroups.devices = "cgroup";
	return 0;
}

static void v1_shutdown(void)
{
	for (int i = 0; i < RT_NCTRL; i++) {
		if (runtime_self()->cgroups.parent[i])
			rmdir(runtime_self()->cgroups.parent[i]);
		free(runtime_self()->cgroups.parent[i]);
		runtime_self()->cgroups.parent[i] = NULL;
	}
}

static int v1_make(struct runtime_cgroup *cg, const char *id, int memory_mb, int cpu_count)
{
	char text[64];
	for (int i = 0; i < RT_NCTRL; i++) {
		cg->dir[i] = malloc(strlen(runtime_self()->cgroups.parent[i]) + strlen(id) + 2);
		if (!cg->dir[i])
			return -1;
		sprintf(cg->dir[i], "%s/%s", runtime_self()->cgroups.parent[i], id);
		if (mkdir(cg->dir[i], 0755) != 0 && errno != EEXIST)
			return -1;
	}
	snprintf(text, sizeof text, "%lld", (long long)memory_mb * 1024 * 1024);
	if (runtime_write_at(cg->dir[RT_MEMORY], "memory.limit_in_bytes", text) != 0)
		return -1;
	runtime_write_at(cg->dir[RT_MEMORY], "memory.memsw.limit_in_bytes",
		text); /* only with swap accounting */
	/* Socket buffers (TCP's and, on the same counter, UDP's receive queues)
	 * are charged to a cgroup v1 only once this is set: without it a
	 * sandbox holds gigabytes of them outside its limit. A kernel without
	 * the file (no kmem accounting) is left as it is. */
	if (runtime_write_at(cg->dir[RT_MEMORY], "memory.kmem.tcp.limit_in_bytes", text) != 0 &&
		errno != ENOENT)
		return -1;
	snprintf(text, sizeof text, "%d", SANDBOX_PIDS_MAX);
	if (runtime_write_at(cg->dir[RT_PIDS], "pids.max", text) != 0)
		return -1;
	snprintf(text, sizeof text, "%d", cpu_count * 100000);
	if (runtime_write_at(cg->dir[RT_CPU], "cpu.cfs_period_us", "100000") != 0 ||
		runtime_write_at(cg->dir[RT_CPU], "cpu.cfs_quota_us", text) != 0)
		return -1;
	for (int i = 0; i < RT_NCTRL; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/cgroup.procs", cg->dir[i]);
		cg->procs_fd[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (cg->procs_fd[i] < 0)
			return -1;
	}
	char path[512];
	snprintf(path, sizeof path, "%s/pids.current", cg->dir[RT_PIDS]);
	cg->pids_fd = open(path, O_RDONLY | O_CLOEXEC);
	return cg->pids_fd < 0 ? -1 : 0;
}

static int v1_freeze(const struct runtime_cgroup *cg, bool frozen)
{
	const char *dir = cg->dir[RT_FREEZER];
	if (!dir)
		return 1;
	const char *want = frozen ? "FROZEN" : "THAWED";
	if (runtime_write_at(dir, "freezer.state", want) != 0)
		return -1;
	/* FREEZING turns into FROZEN once every task has stopped; wait for it,
	 * so nothing runs after the pause has been answered. */
	for (int tries = 0; tries < 1000; tries++) {
		char state[32];
		if (runtime_read_at(dir, "freezer.state", state, sizeof state) != 0)
			return -1;
		if (strncmp(state, want, strlen(want)) == 0)
			return 0;
		if (frozen && tries % 50 == 49)
			runtime_write_at(dir, "freezer.state", want);
		runtime_sleep_ms(1);
	}
	return -1;
}

/* Frozen tasks do not die until thawed. */
/* Each process is sent SIGKILL while still frozen, so a paused sandbox runs
 * nothing more: a frozen task keeps the signal pending and dies as it thaws,
 * without returning to its own code. */
static void v1_kill(const struct runtime_cgroup *cg)
{
	if (cg->dir[RT_FREEZER]) {
		kill_listed(cg->dir[RT_FREEZER]);
		runtime_write_at(cg->dir[RT_FREEZER], "freezer.state", "THAWED");
	}
}

static void v1_drain(const struct runtime_cgroup *cg)
{
	drain_dirs(cg->dir);
}

static int read_number(const char *dir, const char *file, uint64_t *out)
{
	char buf[64];
	char *end;
	if (runtime_read_at(dir, file, buf, sizeof buf) != 0)
		return -1;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (end == buf || errno)
		return -1;
	*out = v;
	return 0;
}

static int v1_usage(const struct runtime_cgroup *cg, struct runtime_cgroup_usage *out)
{
	char stat[4096];
	if (!cg->dir[RT_MEMORY] || !cg->dir[RT_CPUACCT] ||
		read_number(cg->dir[RT_CPUACCT], "cpuacct.usage", &out->cpu_ns) != 0 ||
		read_number(cg->dir[RT_MEMORY], "memory.usage_in_bytes", &out->memory) != 0 ||
		runtime_read_at(cg->dir[RT_MEMORY], "memory.stat", stat, sizeof stat) != 0)
		return -1;
	if (runtime_cgroup_keyed(stat, "total_cache", &out->cache) != 0)
		out->cache = 0;
	return 0;
}

const struct runtime_cgroup_ops runtime_cgroup_v1_ops = {
	.init = v1_init,
	.shutdown = v1_shutdown,
	.make = v1_make,
	.freeze = v1_freeze,
	.kill = v1_kill,
	.drain = v1_drain,
	.usage = v1_usage,
};
