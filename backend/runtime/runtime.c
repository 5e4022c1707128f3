/* The sandbox runtime's lifecycle (runtime.h): the isolation check at
 * start, per sandbox its id range, cgroups and init (pid 1 of new
 * namespaces), and freeze/thaw. The overlay root over its layers:
 * runtime_overlay.c. Leftovers of a dead backend:
 * runtime_leftovers.c; removal: runtime_remove.c; the disk the overlay's
 * writable layer lives on: runtime_disk.c; the rootless backend's own
 * namespaces: runtime_rootless.c. */
#define _GNU_SOURCE
#include "runtime/runtime.h"
#include "runtime/runtime_dynmods.h"

/* Paths here are built into fixed buffers (PATH_MAX-sized); one that would
 * not fit is cut and then simply not found, except the overlay's options,
 * whose length is checked. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/err.h"
#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_clone.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_disk_image.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_init_copy.h"
#include "runtime/runtime_leftovers.h"
#include "runtime/runtime_overlay.h"
#include "runtime/runtime_remove.h"
#include "runtime/runtime_rootless.h"
#include "runtime/runtime_userns.h"
#include "runtime/runtime_volumes.h"
#include "runtime/runtime_seccomp.h"
#include "runtime/runtime_spawn.h"
#include "runtime/runtime_shift.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

bool runtime_isolated(void)
{
	return runtime_self()->mode == ISOLATION_FULL || runtime_self()->mode == ISOLATION_ROOTLESS;
}

const char *runtime_isolation_name(void)
{
	enum isolation mode = runtime_self()->mode;
	return mode == ISOLATION_FULL ? "full" : mode == ISOLATION_ROOTLESS ? "rootless" : "none";
}

void runtime_limits(struct runtime_limits *out)
{
	const struct runtime_cgroups *cgs = &runtime_self()->cgroups;
	bool cgroups = runtime_isolated() && cgs->version != RT_CGROUP_NONE;
	out->memory = cgroups && cgs->memory;
	out->pids = cgroups && cgs->pids;
	out->cpu = cgroups && cgs->cpu;
	out->disk = runtime_self()->mode == ISOLATION_FULL;
	out->devices = cgroups && cgs->devices               ? cgs->devices
		: runtime_self()->mode == ISOLATION_ROOTLESS ? "userns"
							     : NULL;
}

const char *runtime_cgroup_hierarchy(void)
{
	if (!runtime_isolated())
		return NULL;
	enum runtime_cgroup_version v = runtime_self()->cgroups.version;
	return v == RT_CGROUP_V2 ? "v2" : v == RT_CGROUP_V1 ? "v1" : NULL;
}

const char *runtime_cgroup_sandboxes(void)
{
	const struct runtime_cgroups *cgs = &runtime_self()->cgroups;
	return runtime_isolated() ? cgs->parent[cgs->version == RT_CGROUP_V1 ? RT_PIDS : 0] : NULL;
}

bool runtime_full(void)
{
	return runtime_self()->mode == ISOLATION_FULL;
}

bool runtime_migrates(void)
{
	return runtime_isolated() && runtime_cgroup_migrates();
}

pid_t runtime_host_pid(void)
{
	const struct runtime_rootless *rl = runtime_rootless_state();
	return rl->entered ? rl->host_pid : getpid();
}

/* --- start -------------------------------------------------------------------- */

/* Whether the kernel, the init binary and the templates are there: -1
 * with what is missing (status an errno, or 0). */
static int check_pieces(const char *templates_dir, struct err *err)
{
	if (runtime_self()->mode == ISOLATION_FULL && geteuid() != 0)
		return err_set(err, EPERM, "not running as root");
	static const char *const ns[] = {"user", "pid", "mnt", "uts", "ipc", "net"};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/ns/%s", ns[i]);
		if (access(path, F_OK) != 0)
			return err_set(err, errno, "no %s namespaces in this kernel", ns[i]);
	}
	FILE *f = fopen("/proc/filesystems", "re");
	bool overlay = false;
	char line[128];
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "\toverlay\n"))
			overlay = true;
	if (f)
		fclose(f);
	if (!overlay)
		return err_set(err, ENODEV, "no overlayfs in this kernel");
	if (runtime_self()->init_fd < 0)
		return err_set(err, ENOENT, "no sandbox init binary next to the backend (%s)",
			runtime_self()->init_path ? runtime_self()->init_path : "?");
	struct stat st;
	if (stat(templates_dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return err_set(err, ENOENT, "no templates directory %s (./build.sh builds it)",
			templates_dir);
	return runtime_self()->mode == ISOLATION_FULL ? runtime_disk_image_check(err) : 0;
}

/* The backend's own mount namespace, so every overlay disappears with the
 * backend even when it is killed with SIGKILL. */
static int private_mounts(struct err *err)
{
	if (unshare(CLONE_NEWNS) != 0)
		return err_set(err, errno, "unshare(CLONE_NEWNS) failed");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return err_set(err, errno, "cannot make mounts private");
	return 0;
}

static void locate_init(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 32);
	if (n <= 0)
		return;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return;
	strcpy(slash + 1, "e2b-sandbox-init");
	runtime_self()->init_path = strdup(exe);
	runtime_self()->init_fd = open(exe, O_PATH | O_CLOEXEC);
}

/* What a rootless backend's sandboxes get, on stderr. */
static void say_rootless_limits(void)
{
	struct runtime_limits l;
	runtime_limits(&l);
	char missing[64] = "";
	const char *names[] = {"cpu", "memory", "pids"};
	bool got[] = {l.cpu, l.memory, l.pids};
	for (int i = 0; i < 3; i++)
		if (!got[i])
			snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
				missing[0] ? ", " : "", names[i]);
	if (!l.memory && !l.pids && !l.cpu)
		snprintf(missing, sizeof missing, "cpu, memory or pids");
	bool freezer = runtime_self()->cgroups.version != RT_CGROUP_NONE;
	if (missing[0])
		fprintf(stderr,
			"e2b-local-backend: rootless: sandboxes have no %s limits (%s), no "
			"network but loopback, and pause %s\n",
			missing, freezer ? "controllers not delegated to this user" : "no cgroup delegation",
			freezer ? "freezes their cgroup" : "stops their processes with SIGSTOP");
	else
		fprintf(stderr,
			"e2b-local-backend: rootless: sandboxes have cpu, memory and pids "
			"limits (cgroup v2, delegated to this user), no network but loopback, and pause "
			"freezes their cgroup\n");
}

int runtime_init(struct event_base *base, enum isolation requested, const char *templates_dir,
	const char *state_root)
{
	runtime_self()->base = base;
	runtime_self()->templates_dir = strdup(templates_dir);
	runtime_self()->state_root = strdup(state_root);
	if (!runtime_self()->templates_dir || !runtime_self()->state_root)
		return -1;
	if (requested == ISOLATION_NONE) {
		runtime_self()->mode = ISOLATION_NONE;
		runtime_clean_stale_dirs(state_root);
		return 0;
	}
	runtime_self()->mode = requested == ISOLATION_ROOTLESS ? ISOLATION_ROOTLESS : ISOLATION_FULL;
	locate_init();
	struct err why;
	int rc = check_pieces(templates_dir, &why);
	if (rc == 0 && runtime_self()->mode == ISOLATION_FULL) {
		rc = runtime_ids_init_pool(&why);
		if (rc == 0)
			rc = private_mounts(&why);
		if (rc == 0)
			rc = runtime_init_copy(&why);
		if (rc == 0)
			rc = runtime_cgroup_init(true, runtime_backend_alive, &why);
	} else if (rc == 0) {
		/* Rootless: the backend's namespace holds the sandboxes' ids (its
		 * subordinate ids from 1, or only 0), one range for all of them. */
		const struct runtime_rootless *rl = runtime_rootless_state();
		runtime_self()->single_id = rl->single_id;
		runtime_ids_init_shared(rl->ids_base,
			rl->ids_count < RUNTIME_IDS_PER_SANDBOX ? rl->ids_count : RUNTIME_IDS_PER_SANDBOX);
		/* Cgroups where the machine delegates them to the user (v2);
		 * without, sandboxes go without limits. */
		struct err no_cgroups;
		if (runtime_cgroup_init(false, runtime_backend_alive, &no_cgroups) != 0)
			fprintf(stderr, "e2b-local-backend: rootless without cgroups: %s\n", no_cgroups.msg);
	}
	if (rc == 0) {
		runtime_self()->self_pid_ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
		runtime_self()->cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (runtime_self()->self_pid_ns < 0)
			rc = err_set(&why, errno, "cannot open the backend's own namespaces");
		else if (runtime_self()->cwd_fd < 0)
			rc = err_set(&why, errno, "cannot open the working directory");
	}
	if (rc == 0)
		rc = runtime_seccomp_build(&why);
	runtime_clean_stale_dirs(state_root);
	if (rc == 0 && runtime_self()->mode == ISOLATION_FULL)
		rc = runtime_disk_init(state_root, &why); /* after the cleaning of a dead backend's disks/ */
	if (rc != 0) {
		const char *mode = requested == ISOLATION_AUTO ? "isolation auto: full isolation"
			: requested == ISOLATION_FULL          ? "--isolation full"
							       : "rootless isolation";
		fprintf(stderr,
			"e2b-local-backend: %s is not possible here: %s (--isolation none, "
			"asked for by name, runs sandbox commands on the host instead)\n",
			mode, why.msg);
		runtime_self()->mode = ISOLATION_NONE;
		return -1;
	}
	if (runtime_self()->mode == ISOLATION_ROOTLESS)
		say_rootless_limits();
	return 0;
}

void runtime_shutdown(void)
{
	runtime_wait_cleaners();
	runtime_dynmods_stop();
	runtime_disk_shutdown();
	runtime_cgroup_shutdown();
	runtime_ids_shutdown();
	runtime_init_copy_remove();
	if (runtime_self()->state_root) {
		char path[4096];
		snprintf(path, sizeof path, "%s/backend.pid", runtime_self()->state_root);
		unlink(path);
	}
	if (runtime_self()->self_pid_ns >= 0)
		close(runtime_self()->self_pid_ns);
	if (runtime_self()->cwd_fd >= 0)
		close(runtime_self()->cwd_fd);
	if (runtime_self()->init_fd >= 0)
		close(runtime_self()->init_fd);
	runtime_seccomp_release();
	free(runtime_self()->init_path);
	free(runtime_self()->templates_dir);
	free(runtime_self()->state_root);
	runtime_self_reset();
}

/* --- create ------------------------------------------------------------------ */

int runtime_check_create(const char *template_id, int cpu_count, int memory_mb, int disk_size_mb,
	struct err *err)
{
	if (cpu_count < 1 || cpu_count > SANDBOX_MAX_CPU_COUNT)
		return err_set(err, 400, "cpuCount must be between 1 and %d", SANDBOX_MAX_CPU_COUNT);
	if (memory_mb < SANDBOX_MIN_MEMORY_MB || memory_mb > SANDBOX_MAX_MEMORY_MB)
		return err_set(err, 400, "memoryMB must be between %d and %d (a shell needs at least %d MiB)",
			SANDBOX_MIN_MEMORY_MB, SANDBOX_MAX_MEMORY_MB, SANDBOX_MIN_MEMORY_MB);
	if (disk_size_mb < SANDBOX_MIN_DISK_SIZE_MB || disk_size_mb > SANDBOX_MAX_DISK_SIZE_MB)
		return err_set(err, 400,
			"diskSizeMB must be between %d and %d (a sandbox's disk needs at least %d MiB)",
			SANDBOX_MIN_DISK_SIZE_MB, SANDBOX_MAX_DISK_SIZE_MB, SANDBOX_MIN_DISK_SIZE_MB);
	if (!runtime_isolated())
		return 0; /* no templates without isolation: any name runs on the host */
	char *rootfs = runtime_template_rootfs(template_id);
	struct stat st;
	bool ok = rootfs && stat(rootfs, &st) == 0 && S_ISDIR(st.st_mode);
	free(rootfs);
	if (!ok) /* E2B's answer for a template that does not exist */
		return err_set(err, 404, "template '%.64s' not found", template_id);
	/* Rootless cannot idmap the template: its files must already belong to
	 * the ids the sandboxes' root and users are (the subordinate ids). */
	struct runtime_ids ids;
	if (runtime_self()->mode == ISOLATION_ROOTLESS && runtime_ids_take(&ids) == 0 &&
		st.st_uid != ids.base)
		return err_set(err, 500,
			"template '%.64s' is owned by uid %u in the "
			"backend's namespace, not by the sandboxes' root (%u): rootless needs a template "
			"built by this user (./build.sh) from its subordinate ids",
			template_id, (unsigned)st.st_uid, (unsigned)ids.base);
	/* Rootless has no disk limit: it cannot attach loop devices. */
	return runtime_self()->mode == ISOLATION_FULL ? runtime_disk_check_space(disk_size_mb, err) : 0;
}

/* A fresh runtime state: nothing taken, nothing mounted. */
static struct sandbox_rt *rt_new(void)
{
	struct sandbox_rt *rt = calloc(1, sizeof *rt);
	if (!rt)
		return NULL;
	rt->disk.loop = -1;
	rt->ids.slot = -1;
	runtime_state_no_fds(rt);
	return rt;
}

int runtime_sandbox_adopt(struct sandbox *sb, uid_t id_base, struct err *err)
{
	if (!runtime_isolated())
		return 0;
	struct sandbox_rt *rt = rt_new();
	if (!rt)
		return err_set(err, ENOMEM, "out of memory");
	if (runtime_ids_take_base(id_base, &rt->ids) != 0) {
		/* Taken meanwhile (another backend), or another --id-range: a
		 * free range, and its files move there when it starts. */
		if (runtime_ids_take(&rt->ids) != 0) {
			free(rt);
			return err_set(err, EBUSY, "no free id range (the %s of --id-range are in use)",
				runtime_ids_describe());
		}
		rt->rebase = true;
	}
	rt->kept = true;
	sb->rt = rt;
	return 0;
}

bool runtime_sandbox_cold(const struct sandbox *sb)
{
	return sb->rt && sb->rt->kept && sb->rt->init_pid <= 0;
}

uid_t runtime_sandbox_id_base(const struct sandbox *sb)
{
	return sb->rt ? sb->rt->ids.base : 0;
}

/* The disk of the sandbox: its own from an earlier run (kept), else a new one. */
static int attach_disk(struct sandbox *sb, struct sandbox_rt *rt)
{
	if (!rt->kept)
		return runtime_disk_attach(sb->dir, sb->disk_size_mb, &rt->disk);
	char img[4096], mnt[4096];
	snprintf(img, sizeof img, "%s/disk.img", sb->dir);
	snprintf(mnt, sizeof mnt, "%s/" RUNTIME_DISK_MOUNT, sb->dir);
	if (runtime_disk_image_mount_existing(img, mnt, &rt->disk) != 0)
		return -1;
	if (rt->rebase && runtime_shift_ids(mnt, &rt->ids) != 0)
		return -1;
	rt->rebase = false;
	return 0;
}

int runtime_sandbox_reserve(struct sandbox *sb, struct err *err)
{
	if (!runtime_isolated())
		return 0;
	/* Adopted (runtime_sandbox_adopt): its id range is taken already, its
	 * disk and writable layer are there. */
	struct sandbox_rt *rt = sb->rt ? sb->rt : rt_new();
	if (!rt)
		return err_set(err, 500, "out of memory");
	sb->rt = rt;
	if (!rt->kept && runtime_ids_take(&rt->ids) != 0) {
		err_set(err, 503,
			"no free id range for a new sandbox: the "
			"%s of --id-range are all in use or still being removed",
			runtime_ids_describe());
	} else if (runtime_self()->mode == ISOLATION_FULL && attach_disk(sb, rt) != 0) {
		/* 507: the host's disk is full */
		err_set(err, errno == ENOSPC ? 507 : 500, "cannot prepare the sandbox's disk: %s",
			strerror(errno));
	} else {
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->msg);
	return -1; /* the caller removes it (runtime_sandbox_remove) or stops it again */
}

int runtime_sandbox_mount(struct sandbox *sb, struct err *err)
{
	struct sandbox_rt *rt = sb->rt;
	if (runtime_cgroup_make(&rt->cg, sb->id, sb->memory_mb, sb->cpu_count) != 0) {
		err_set(err, 500, "cannot create the sandbox's cgroups: %s", strerror(errno));
	} else if (runtime_overlay_mount(sb, rt, err) != 0 || runtime_volumes_mount(sb, err) != 0) {
		/* err says why */
	} else {
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->msg);
	return -1;
}

int runtime_sandbox_build(struct sandbox *sb, struct err *err)
{
	if (!runtime_isolated())
		return 0;
	if (runtime_sandbox_mount(sb, err) != 0)
		return -1;
	if (runtime_clone_init(sb->rt, err) != 0) {
		err_wrap(err, "cannot start the sandbox");
	} else {
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->msg);
	return -1; /* the caller removes it (runtime_sandbox_remove) or stops it again */
}

int runtime_sandbox_launch(struct sandbox *sb, struct err *err)
{
	return runtime_sandbox_reserve(sb, err) == 0 ? runtime_sandbox_build(sb, err) : -1;
}

void runtime_sandbox_setup_in_background(const struct sandbox *sb)
{
	/* Only where the backend may give it its priority back afterwards
	 * (root: CAP_SYS_NICE): its commands are its children, and inherit it. */
	if (sb->rt && sb->rt->init_pid > 0 && runtime_self()->mode == ISOLATION_FULL &&
		setpriority(PRIO_PROCESS, (id_t)sb->rt->init_pid, 19) == 0)
		sb->rt->niced = true;
}

int runtime_sandbox_report_fd(const struct sandbox *sb)
{
	return sb->rt ? sb->rt->report_fd : -1;
}

int runtime_sandbox_await(struct sandbox *sb, struct err *err)
{
	if (!sb->rt || sb->rt->report_fd < 0)
		return 0;
	if (runtime_clone_await(sb->rt, err) == 0) {
		/* Set up: from now on it starts the sandbox's commands. */
		if (sb->rt->niced && setpriority(PRIO_PROCESS, (id_t)sb->rt->init_pid, 0) == 0)
			sb->rt->niced = false;
		if (runtime_spawn_watch(sb) == 0)
			return 0;
		err_set(err, 500, "cannot watch its init");
	}
	err_wrap(err, "cannot start the sandbox");
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->msg);
	return -1;
}

int runtime_sandbox_start(struct sandbox *sb, struct err *err)
{
	return runtime_sandbox_launch(sb, err) == 0 ? runtime_sandbox_await(sb, err) : -1;
}

/* --- pause ------------------------------------------------------------------ */

/* Rootless has no freezer: a child forked into the sandbox's pid namespace
 * signals every process there but the init (kill(-1) stops at the
 * namespace). */
static int signal_all(struct sandbox *sb, int sig)
{
	struct sandbox_rt *rt = sb->rt;
	if (rt->ns_fd[RT_NS_PID] < 0 || !runtime_sandbox_alive(sb) ||
		setns(rt->ns_fd[RT_NS_PID], CLONE_NEWPID) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0)
		_exit(kill(-1, sig) == 0 || errno == ESRCH ? 0 : 1);
	if (setns(runtime_self()->self_pid_ns, CLONE_NEWPID) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot return to its own pid namespace\n");
		abort();
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int runtime_sandbox_freeze(struct sandbox *sb, bool frozen)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt)
		return 0;
	int rc = runtime_cgroup_freeze(&rt->cg, frozen);
	return rc == 1 ? signal_all(sb, frozen ? SIGSTOP : SIGCONT) : rc;
}
