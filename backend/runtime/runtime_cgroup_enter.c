/* A backend's leaf cgroup on cgroup v2 (runtime_cgroup_enter.h). */
#define _GNU_SOURCE
#include "runtime/runtime_cgroup_enter.h"

/* Messages name paths; one too long for them is cut. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/err.h"
#include "runtime/runtime_cgroup_parse.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static const char *const wanted[] = {"memory", "pids", "cpu"};
#define NWANTED (sizeof wanted / sizeof wanted[0])

static bool *limit_flag(size_t i)
{
	struct runtime_cgroups *cgs = &runtime_self()->cgroups;
	return i == 0 ? &cgs->memory : i == 1 ? &cgs->pids : &cgs->cpu;
}

/* Enables controller in dir's cgroup.subtree_control unless it is already. */
static int enable(const char *dir, const char *controller, struct err *err)
{
	char list[256], plus[32];
	if (runtime_read_at(dir, "cgroup.subtree_control", list, sizeof list) == 0 &&
		runtime_cgroup_lists(list, controller))
		return 0;
	snprintf(plus, sizeof plus, "+%s", controller);
	if (runtime_write_at(dir, "cgroup.subtree_control", plus) == 0)
		return 0;
	return err_set(err, errno, "cgroup v2: cannot enable controller %s in %s/cgroup.subtree_control: %s",
		controller, dir, strerror(errno));
}

/* A pid other than ours in dir/cgroup.procs, or 0. */
static long other_process(const char *dir)
{
	char procs[4096];
	if (runtime_read_at(dir, "cgroup.procs", procs, sizeof procs) != 0)
		return 0;
	for (char *p = procs; *p;) {
		char *end;
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid != (long)getpid())
			return pid;
		p = end;
	}
	return 0;
}

static const char *run_hint(void)
{
	return geteuid() == 0 ? "systemd-run --scope -p Delegate=yes <backend> ..."
			      : "systemd-run --user --scope -p Delegate=yes <backend> ...";
}

/* Whether <home> (not the root) can be this backend's: writable, and no
 * process in it but this one. */
static int check_home(const char *home, struct err *err)
{
	if (access(home, W_OK | X_OK) != 0)
		return err_set(err, errno,
			"cgroup v2: the backend's cgroup %s is not writable by uid %u "
			"(not delegated to it: start the backend with %s)",
			home, (unsigned)geteuid(), run_hint());
	static const char *const files[] = {"cgroup.procs", "cgroup.subtree_control"};
	for (size_t i = 0; i < 2; i++) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", home, files[i]);
		if (access(path, W_OK) != 0)
			return err_set(err, errno,
				"cgroup v2: %s is not writable by uid %u (the cgroup is "
				"not delegated: start the backend with %s)",
				path, (unsigned)geteuid(), run_hint());
	}
	long other = other_process(home);
	if (other)
		return err_set(err, EBUSY,
			"cgroup v2: the backend's cgroup %s holds other processes "
			"(pid %ld), and cgroup v2 enables controllers only below a cgroup without "
			"processes: start the backend in a cgroup of its own (%s)",
			home, other, run_hint());
	return 0;
}

/* Which of memory, pids and cpu the cgroup above hands down to <home>. */
static int available(const char *top, bool full, struct err *err)
{
	char list[256] = "";
	runtime_read_at(top, "cgroup.controllers", list, sizeof list);
	for (size_t i = 0; i < NWANTED; i++) {
		*limit_flag(i) = runtime_cgroup_lists(list, wanted[i]);
		if (*limit_flag(i))
			continue;
		err_set(err, ENOENT,
			"cgroup v2: controller %s is not available in "
			"%s/cgroup.controllers (%s)",
			wanted[i], top,
			strcmp(top, CGROUP_ROOT) == 0
				? "bound to a cgroup v1 hierarchy, or not in this kernel"
				: "the cgroup above does not delegate it");
		if (full)
			return -1;
		fprintf(stderr, "e2b-local-backend: %s: sandboxes get no %s limit\n", err->msg, wanted[i]);
	}
	return 0;
}

static int enter(bool full, struct err *err)
{
	struct runtime_cgroups *cgs = &runtime_self()->cgroups;
	struct statfs fs;
	if (statfs(CGROUP_ROOT, &fs) != 0 ||
		runtime_cgroup_version_of((unsigned long)fs.f_type) != RT_CGROUP_V2)
		return 0;
	char text[4096], own[PATH_MAX - 64];
	if (runtime_read_at("/proc/self", "cgroup", text, sizeof text) != 0 ||
		runtime_cgroup_parse_self(text, own, sizeof own) != 0)
		return err_set(err, 0,
			"cgroup v2: cannot tell the backend's own cgroup from /proc/self/cgroup");
	bool at_root = strcmp(own, "/") == 0;
	if (at_root && !full)
		return err_set(err, EPERM,
			"cgroup v2: the backend runs in the root cgroup, which only root may divide");
	char home[PATH_MAX], group[PATH_MAX + 16], leaf[PATH_MAX + 32];
	snprintf(home, sizeof home, at_root ? CGROUP_ROOT "/" CGROUP_GROUP : CGROUP_ROOT "%s", own);
	if ((!at_root && check_home(home, err) != 0) ||
		available(at_root ? CGROUP_ROOT : home, full, err) != 0)
		return -1;
	if (at_root) {
		for (size_t i = 0; i < NWANTED; i++)
			if (enable(CGROUP_ROOT, wanted[i], err) != 0)
				return -1;
		if (mkdir(home, 0755) != 0 && errno != EEXIST)
			return err_set(err, errno, "cgroup v2: cannot create %s: %s", home, strerror(errno));
	}
	pid_t owner = getpid();
	snprintf(group, sizeof group, "%s/b%d", home, (int)owner);
	snprintf(leaf, sizeof leaf, "%s/backend", group);
	if ((mkdir(group, 0755) != 0 && errno != EEXIST) || (mkdir(leaf, 0755) != 0 && errno != EEXIST) ||
		runtime_write_at(leaf, "cgroup.procs", "0") != 0)
		return err_set(err, errno, "cgroup v2: cannot move the backend into %s: %s", leaf,
			strerror(errno));
	cgs->home = strdup(home);
	cgs->parent[0] = strdup(group);
	cgs->started = at_root ? strdup(CGROUP_ROOT) : NULL;
	cgs->owner = owner;
	cgs->entered = true;
	if (!cgs->home || !cgs->parent[0] || (at_root && !cgs->started))
		return err_set(err, ENOMEM, "out of memory");
	/* Now that this process has left <home>: its controllers for the
	 * groups below, and b<pid>'s for the sandboxes'. A user's backend
	 * without one of them goes on without that limit. */
	for (size_t i = 0; i < NWANTED; i++) {
		if (!*limit_flag(i))
			continue;
		if (enable(home, wanted[i], err) != 0 || enable(group, wanted[i], err) != 0) {
			if (full)
				return -1;
			*limit_flag(i) = false;
			fprintf(stderr, "e2b-local-backend: %s\n", err->msg);
		}
	}
	return 0;
}

/* Once: a rootless backend tries in the process it was started as, and its
 * continuation in its own namespaces (a copy) gets the same answer, kept
 * here with its reason. */
int runtime_cgroup_enter(bool full, struct err *err)
{
	static bool tried;
	static int result;
	static struct err first;
	if (!tried) {
		tried = true;
		result = enter(full, &first);
	}
	if (result != 0 && err)
		*err = first;
	return result;
}
