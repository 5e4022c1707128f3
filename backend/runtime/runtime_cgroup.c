/* The sandboxes' cgroups over either hierarchy (runtime_cgroup.h): the
 * choice, and what both share (descriptors, joining, pids.current). */
#define _GNU_SOURCE
#include "runtime/runtime_cgroup.h"

#include "lib/err.h"
#include "runtime/runtime_cgroup_v1.h"
#include "runtime/runtime_cgroup_v2.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

const char *const rt_controllers[RT_NCTRL] = {"memory", "pids", "cpu", "freezer", "devices", "cpuacct"};

static const struct runtime_cgroup_ops *ops(void)
{
	switch (runtime_self()->cgroups.version) {
	case RT_CGROUP_V1:
		return &runtime_cgroup_v1_ops;
	case RT_CGROUP_V2:
		return &runtime_cgroup_v2_ops;
	default:
		return NULL;
	}
}

int runtime_cgroup_init(bool full, bool (*alive)(pid_t pid), struct err *err)
{
	struct statfs fs;
	enum runtime_cgroup_version v = statfs(CGROUP_ROOT, &fs) == 0
		? runtime_cgroup_version_of((unsigned long)fs.f_type)
		: RT_CGROUP_NONE;
	/* Rootless on v1: no delegation to a user there. */
	if (v == RT_CGROUP_NONE || (v == RT_CGROUP_V1 && !full)) {
		runtime_self()->cgroups.version = RT_CGROUP_NONE;
		return full ? err_set(err, ENOENT, "no cgroup hierarchy at " CGROUP_ROOT) : 0;
	}
	runtime_self()->cgroups.version = v;
	int rc = ops()->init(full, alive, err);
	if (rc != 0)
		runtime_self()->cgroups.version = RT_CGROUP_NONE;
	return rc;
}

void runtime_cgroup_shutdown(void)
{
	if (ops())
		ops()->shutdown();
}

bool runtime_cgroup_migrates(void)
{
	return runtime_self()->cgroups.version == RT_CGROUP_V1;
}

void runtime_cgroup_none(struct runtime_cgroup *cg)
{
	for (int i = 0; i < RT_NCTRL; i++) {
		cg->dir[i] = NULL;
		cg->procs_fd[i] = -1;
	}
	cg->pids_fd = cg->dir_fd = -1;
}

int runtime_cgroup_make(struct runtime_cgroup *cg, const char *id, int memory_mb, int cpu_count)
{
	return ops() ? ops()->make(cg, id, memory_mb, cpu_count) : 0;
}

int runtime_cgroup_clone_fd(const struct runtime_cgroup *cg)
{
	return cg->dir_fd;
}

int runtime_cgroup_attach(const struct runtime_cgroup *cg, pid_t pid)
{
	char text[24];
	int n = snprintf(text, sizeof text, "%d", (int)pid);
	int rc = 0, err = 0;
	for (int i = 0; i < RT_NCTRL; i++) {
		if (cg->procs_fd[i] < 0 || write(cg->procs_fd[i], text, (size_t)n) == n)
			continue;
		if (rc == 0)
			err = errno;
		rc = -1;
		if (errno != ESRCH) /* a child that has ended already */
			fprintf(stderr, "e2b-local-backend: cgroup %s: %s\n", rt_controllers[i],
				strerror(errno));
	}
	errno = err;
	return rc;
}

int runtime_cgroup_join(const struct runtime_cgroup *cg)
{
	for (int i = 0; i < RT_NCTRL; i++)
		if (cg->procs_fd[i] >= 0 && write(cg->procs_fd[i], "0", 1) != 1)
			return -1;
	return 0;
}

long runtime_cgroup_pids(const struct runtime_cgroup *cg)
{
	if (cg->pids_fd < 0)
		return -1;
	char text[32];
	ssize_t n = pread(cg->pids_fd, text, sizeof text - 1, 0);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	return strtol(text, NULL, 10);
}

bool runtime_cgroup_checks_pids(const struct runtime_cgroup *cg)
{
	return cg->dir_fd >= 0;
}

int runtime_cgroup_freeze(const struct runtime_cgroup *cg, bool frozen)
{
	return ops() && cg->dir[0] ? ops()->freeze(cg, frozen) : 1;
}

void runtime_cgroup_kill(const struct runtime_cgroup *cg)
{
	if (ops() && cg->dir[0])
		ops()->kill(cg);
}

void runtime_cgroup_drain(const struct runtime_cgroup *cg)
{
	if (ops() && cg->dir[0])
		ops()->drain(cg);
}

int runtime_cgroup_usage(const struct runtime_cgroup *cg, struct runtime_cgroup_usage *out)
{
	memset(out, 0, sizeof *out);
	return ops() && cg->dir[0] ? ops()->usage(cg, out) : -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void runtime_cgroup_close(struct runtime_cgroup *cg)
{
	for (int i = 0; i < RT_NCTRL; i++)
		close_fd(&cg->procs_fd[i]);
	close_fd(&cg->pids_fd);
	close_fd(&cg->dir_fd);
}

void runtime_cgroup_free(struct runtime_cgroup *cg)
{
	runtime_cgroup_close(cg);
	for (int i = 0; i < RT_NCTRL; i++) {
		free(cg->dir[i]);
		cg->dir[i] = NULL;
	}
}
