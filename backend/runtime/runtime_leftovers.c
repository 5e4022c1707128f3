/* What a backend that was killed (SIGKILL) left behind: its sandboxes'
 * cgroups, and its state directory's sandbox directories. Cleaned at the next
 * start of any backend (see runtime_init). */
#define _GNU_SOURCE
#include "runtime/runtime_leftovers.h"

/* Paths here are built into fixed buffers (PATH_MAX-sized); one that would
 * not fit is cut and then simply not found. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/tree_remove.h"
#include "runtime/runtime_cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>


/* Whether pid is a live e2b-local-backend (comm is cut to 15 characters). */
bool runtime_backend_alive(pid_t pid)
{
	char path[64], comm[32] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(comm, sizeof comm, f) != NULL;
	fclose(f);
	return ok && strncmp(comm, "e2b-local-backe", 15) == 0;
}

/* Cgroups under /sys/fs/cgroup/<ctrl>/e2b-local/b<pid> of backends that are gone. */
void runtime_clean_stale_cgroups(void)
{
	char base[256];
	snprintf(base, sizeof base, CGROUP_ROOT "/%s/" CGROUP_GROUP, rt_controllers[RT_PIDS]);
	DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != 'b')
			continue;
		pid_t owner = (pid_t)atoi(e->d_name + 1);
		if (owner <= 0 || owner == getpid() || runtime_backend_alive(owner))
			continue;
		fprintf(stderr, "e2b-local-backend: removing cgroups left by backend %d\n", (int)owner);
		/* Sandboxes first (every controller), then the backend's own group. */
		char inst[512];
		snprintf(inst, sizeof inst, "%s/%s", base, e->d_name);
		DIR *sd = opendir(inst);
		struct dirent *s;
		while (sd && (s = readdir(sd)) != NULL) {
			if (s->d_name[0] == '.')
				continue;
			char paths[RT_NCTRL][512];
			const char *dirs[RT_NCTRL];
			for (int i = 0; i < RT_NCTRL; i++) {
				snprintf(paths[i], sizeof paths[i], CGROUP_ROOT "/%s/" CGROUP_GROUP "/%s/%s",
					rt_controllers[i], e->d_name, s->d_name);
				dirs[i] = paths[i];
			}
			runtime_drain_cgroup(dirs);
		}
		if (sd)
			closedir(sd);
		for (int i = 0; i < RT_NCTRL; i++) {
			char path[512];
			snprintf(path, sizeof path, CGROUP_ROOT "/%s/" CGROUP_GROUP "/%s", rt_controllers[i],
				e->d_name);
			rmdir(path);
		}
	}
	closedir(d);
}

/* Overlays of an earlier run of the backend mounted in the host's mount
 * namespace (only by an older backend; this one mounts in a private one). */
static void clean_stale_mounts(const char *sandboxes_dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	char line[4096];
	size_t prefix = strlen(sandboxes_dir);
	while (fgets(line, sizeof line, f)) {
		char mp[2048];
		if (sscanf(line, "%*s %*s %*s %*s %2047s", mp) != 1)
			continue;
		if (strncmp(mp, sandboxes_dir, prefix) == 0 && mp[prefix] == '/')
			umount2(mp, MNT_DETACH);
	}
	fclose(f);
}

/* The state directory's sandboxes/ of an earlier run that was killed, and
 * mkdtemp state directories of backends that are gone. */
void runtime_clean_stale_dirs(const char *state_root)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/backend.pid", state_root);
	FILE *f = fopen(path, "re");
	int old = 0;
	if (f) {
		if (fscanf(f, "%d", &old) != 1)
			old = 0;
		fclose(f);
	}
	char sandboxes[4096];
	snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", state_root);
	if (old > 0 && old != getpid() && !runtime_backend_alive(old)) {
		clean_stale_mounts(sandboxes);
		DIR *d = opendir(sandboxes);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "%s/%s", sandboxes, e->d_name);
			fprintf(stderr, "e2b-local-backend: removing %s left by backend %d\n", path, old);
			tree_remove(path);
		}
		if (d)
			closedir(d);
	}
	snprintf(path, sizeof path, "%s/backend.pid", state_root);
	FILE *w = fopen(path, "we");
	if (w) {
		fprintf(w, "%d\n", (int)getpid());
		fclose(w);
	}

	/* Sibling mkdtemp directories whose backend is gone. */
	char parent[4096];
	snprintf(parent, sizeof parent, "%s", state_root);
	char *slash = strrchr(parent, '/');
	if (!slash || strncmp(slash + 1, "e2b-local-backend.", 18) != 0)
		return;
	*slash = '\0';
	DIR *d = opendir(parent[0] ? parent : "/");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "e2b-local-backend.", 18) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s/backend.pid", parent, e->d_name);
		FILE *pf = fopen(path, "re");
		int pid = 0;
		if (!pf)
			continue;
		if (fscanf(pf, "%d", &pid) != 1)
			pid = 0;
		fclose(pf);
		if (pid <= 0 || pid == getpid() || runtime_backend_alive(pid))
			continue;
		snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
		fprintf(stderr, "e2b-local-backend: removing %s left by backend %d\n", path, pid);
		snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", path);
		clean_stale_mounts(sandboxes);
		tree_remove(path);
	}
	if (d)
		closedir(d);
}

