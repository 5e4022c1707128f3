/* What a backend that was killed (SIGKILL) left behind: its state
 * directory's sandbox directories and disk images, and any loop device
 * still holding one of those (its cgroups: runtime_cgroup_v1.c,
 * runtime_cgroup_v2.c). Cleaned at the next start of any backend (see
 * runtime_init). */
#define _GNU_SOURCE
#include "runtime/runtime_leftovers.h"

/* Paths here are built into fixed buffers (PATH_MAX-sized); one that would
 * not fit is cut and then simply not found. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/tree_remove.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_disk_image.h"
#include "runtime/runtime_rootless.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEFTOVER_LOOP_WAIT_MS 10000

/* This backend's pid as backend.pid files and cgroup names record it: the
 * machine's (rootless, the backend is pid 1 of a namespace of its own). */
static pid_t self_pid(void)
{
	const struct runtime_rootless *rl = runtime_rootless_state();
	return rl->entered ? rl->host_pid : getpid();
}

/* Whether pid (the machine's) is a live e2b-local-backend (comm is cut to
 * 15 characters). */
bool runtime_backend_alive(pid_t pid)
{
	const struct runtime_rootless *rl = runtime_rootless_state();
	char path[64], comm[32] = "";
	snprintf(path, sizeof path, "%s%d/comm", rl->host_proc_fd >= 0 ? "" : "/proc/", (int)pid);
	int fd = openat(rl->host_proc_fd >= 0 ? rl->host_proc_fd : AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, comm, sizeof comm - 1);
	close(fd);
	return n > 0 && strncmp(comm, "e2b-local-backe", 15) == 0;
}

/* Loop devices still holding images under root, a dead backend's state
 * directory: each was attached with autoclear, so the kernel lets it go
 * once the dead backend's mount namespace is gone; this makes sure. */
static void forget_disks(const char *root, int owner)
{
	/* Kept sandboxes and volumes are used again: their filesystems must
	 * have been written out and let go first. A dead backend's mounts can
	 * outlive it for a moment (a sandbox that was frozen dies only once the
	 * cgroup cleaning has thawed and killed it): wait for the kernel. */
	for (int ms = 0; ms < LEFTOVER_LOOP_WAIT_MS && runtime_disk_image_loops_under(root, false) > 0;
		ms += 5)
		runtime_sleep_ms(5);
	int n = runtime_disk_image_loops_under(root, true);
	if (n > 0)
		fprintf(stderr, "e2b-local-backend: detaching %d loop device%s left by backend %d\n", n,
			n == 1 ? "" : "s", owner);
}

/* The state directory's sandboxes/ (but those with a record) and disks/ of
 * an earlier run that was killed, and mkdtemp state directories of backends
 * that are gone. */
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
	if (old > 0 && old != self_pid() && !runtime_backend_alive(old)) {
		/* Overlays mounted in the host's mount namespace (only by an older
		 * backend; this one mounts in a private one). */
		runtime_disk_image_unmount_below(sandboxes);
		forget_disks(state_root, old);
		DIR *d = opendir(sandboxes);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			/* A sandbox with a record (store/store_records.h) is kept:
			 * the registry brings it back paused on this disk. */
			snprintf(path, sizeof path, "%s/records/sandboxes/%s.json", state_root, e->d_name);
			if (access(path, F_OK) == 0)
				continue;
			snprintf(path, sizeof path, "%s/%s", sandboxes, e->d_name);
			fprintf(stderr, "e2b-local-backend: removing %s left by backend %d\n", path, old);
			tree_remove(path);
		}
		if (d)
			closedir(d);
		snprintf(path, sizeof path, "%s/disks", state_root); /* the pool and master images */
		tree_remove(path);
	}
	snprintf(path, sizeof path, "%s/backend.pid", state_root);
	FILE *w = fopen(path, "we");
	if (w) {
		fprintf(w, "%d\n", (int)self_pid());
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
		if (pid <= 0 || pid == self_pid() || runtime_backend_alive(pid))
			continue;
		snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
		fprintf(stderr, "e2b-local-backend: removing %s left by backend %d\n", path, pid);
		snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", path);
		runtime_disk_image_unmount_below(sandboxes);
		forget_disks(path, pid);
		tree_remove(path);
	}
	if (d)
		closedir(d);
}
