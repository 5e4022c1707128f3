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

#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_clone.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_disk_image.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_ids.h"
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

static const char *missing_piece(const char *templates_dir)
{
	static char why[512];
	if (runtime_self()->mode == ISOLATION_FULL && geteuid() != 0)
		return "not running as root";
	static const char *const ns[] = {"user", "pid", "mnt", "uts", "ipc", "net"};
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/ns/%s", ns[i]);
		if (access(path, F_OK) != 0) {
			snprintf(why, sizeof why, "no %s namespaces in this kernel", ns[i]);
			return why;
		}
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
		return "no overlayfs in this kernel";
	if (runtime_self()->init_fd < 0) {
		snprintf(why, sizeof why, "no sandbox init binary next to the backend (%s)",
			runtime_self()->init_path ? runtime_self()->init_path : "?");
		return why;
	}
	struct stat st;
	if (stat(templates_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, sizeof why, "no templates directory %s (./build.sh builds it)", templates_dir);
		return why;
	}
	return runtime_self()->mode == ISOLATION_FULL ? runtime_disk_image_missing() : NULL;
}

/* The backend's own mount namespace, so every overlay disappears with the
 * backend even when it is killed with SIGKILL. */
static const char *private_mounts(void)
{
	if (unshare(CLONE_NEWNS) != 0)
		return "unshare(CLONE_NEWNS) failed";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return "cannot make mounts private";
	return NULL;
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
	const char *why = missing_piece(templates_dir);
	if (!why && runtime_self()->mode == ISOLATION_FULL) {
		why = runtime_ids_init_pool();
		if (!why)
			why = private_mounts();
		if (!why)
			why = runtime_cgroup_init(true, runtime_backend_alive);
	} else if (!why) {
		/* Rootless: the backend's namespace holds the sandboxes' ids (its
		 * subordinate ids from 1, or only 0), one range for all of them. */
		const struct runtime_rootless *rl = runtime_rootless_state();
		runtime_self()->single_id = rl->single_id;
		runtime_ids_init_shared(rl->ids_base,
			rl->ids_count < RUNTIME_IDS_PER_SANDBOX ? rl->ids_count : RUNTIME_IDS_PER_SANDBOX);
		/* Cgroups where the machine delegates them to the user (v2);
		 * without, sandboxes go without limits. */
		const char *no_cgroups = runtime_cgroup_init(false, runtime_backend_alive);
		if (no_cgroups)
			fprintf(stderr, "e2b-local-backend: rootless without cgroups: %s\n", no_cgroups);
	}
	if (!why) {
		runtime_self()->self_pid_ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
		runtime_self()->cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (runtime_self()->self_pid_ns < 0)
			why = "cannot open the backend's own namespaces";
		else if (runtime_self()->cwd_fd < 0)
			why = "cannot open the working directory";
	}
	if (!why)
		why = runtime_seccomp_build();
	runtime_clean_stale_dirs(state_root);
	if (!why && runtime_self()->mode == ISOLATION_FULL)
		why = runtime_disk_init(state_root); /* after the cleaning of a dead backend's disks/ */
	if (why) {
		const char *mode = requested == ISOLATION_AUTO ? "isolation auto: full isolation"
			: requested == ISOLATION_FULL          ? "--isolation full"
							       : "rootless isolation";
		fprintf(stderr,
			"e2b-local-backend: %s is not possible here: %s (--isolation none, "
			"asked for by name, runs sandbox commands on the host instead)\n",
			mode, why);
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
	struct runtime_error *err)
{
	err->status = 400;
	if (cpu_count < 1 || cpu_count > SANDBOX_MAX_CPU_COUNT) {
		snprintf(err->message, sizeof err->message, "cpuCount must be between 1 and %d",
			SANDBOX_MAX_CPU_COUNT);
		return -1;
	}
	if (memory_mb < SANDBOX_MIN_MEMORY_MB || memory_mb > SANDBOX_MAX_MEMORY_MB) {
		snprintf(err->message, sizeof err->message,
			"memoryMB must be between %d and %d (a shell needs at least %d MiB)",
			SANDBOX_MIN_MEMORY_MB, SANDBOX_MAX_MEMORY_MB, SANDBOX_MIN_MEMORY_MB);
		return -1;
	}
	if (disk_size_mb < SANDBOX_MIN_DISK_SIZE_MB || disk_size_mb > SANDBOX_MAX_DISK_SIZE_MB) {
		snprintf(err->message, sizeof err->message,
			"diskSizeMB must be between %d and %d (a sandbox's disk needs at least %d MiB)",
			SANDBOX_MIN_DISK_SIZE_MB, SANDBOX_MAX_DISK_SIZE_MB, SANDBOX_MIN_DISK_SIZE_MB);
		return -1;
	}
	if (!runtime_isolated())
		return 0; /* no templates without isolation: any name runs on the host */
	char *rootfs = runtime_template_rootfs(template_id);
	struct stat st;
	bool ok = rootfs && stat(rootfs, &st) == 0 && S_ISDIR(st.st_mode);
	free(rootfs);
	if (!ok) {
		/* E2B's answer for a template that does not exist. */
		err->status = 404;
		snprintf(err->message, sizeof err->message, "template '%.64s' not found", template_id);
		return -1;
	}
	/* Rootless cannot idmap the template: its files must already belong to
	 * the ids the sandboxes' root and users are (the subordinate ids). */
	struct runtime_ids ids;
	if (runtime_self()->mode == ISOLATION_ROOTLESS && runtime_ids_take(&ids) == 0 &&
		st.st_uid != ids.base) {
		err->status = 500;
		snprintf(err->message, sizeof err->message,
			"template '%.64s' is owned by uid %u in the "
			"backend's namespace, not by the sandboxes' root (%u): rootless needs a template "
			"built by this user (./build.sh) from its subordinate ids",
			template_id, (unsigned)st.st_uid, (unsigned)ids.base);
		return -1;
	}
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

int runtime_sandbox_adopt(struct sandbox *sb, uid_t id_base, char *why, size_t why_len)
{
	if (!runtime_isolated())
		return 0;
	struct sandbox_rt *rt = rt_new();
	if (!rt) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	if (runtime_ids_take_base(id_base, &rt->ids) != 0) {
		/* Taken meanwhile (another backend), or another --id-range: a
		 * free range, and its files move there when it starts. */
		if (runtime_ids_take(&rt->ids) != 0) {
			snprintf(why, why_len, "no free id range (the %s of --id-range are in use)",
				runtime_ids_describe());
			free(rt);
			return -1;
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

int runtime_sandbox_reserve(struct sandbox *sb, struct runtime_error *err)
{
	if (!runtime_isolated())
		return 0;
	err->status = 500;
	/* Adopted (runtime_sandbox_adopt): its id range is taken already, its
	 * disk and writable layer are there. */
	struct sandbox_rt *rt = sb->rt ? sb->rt : rt_new();
	if (!rt) {
		snprintf(err->message, sizeof err->message, "out of memory");
		return -1;
	}
	sb->rt = rt;
	if (!rt->kept && runtime_ids_take(&rt->ids) != 0) {
		err->status = 503;
		snprintf(err->message, sizeof err->message,
			"no free id range for a new sandbox: the "
			"%s of --id-range are all in use or still being removed",
			runtime_ids_describe());
	} else if (runtime_self()->mode == ISOLATION_FULL && attach_disk(sb, rt) != 0) {
		if (errno == ENOSPC)
			err->status = 507; /* the host's disk is full */
		snprintf(err->message, sizeof err->message, "cannot prepare the sandbox's disk: %s",
			strerror(errno));
	} else {
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->message);
	return -1; /* the caller removes it (runtime_sandbox_remove) or stops it again */
}

int runtime_sandbox_mount(struct sandbox *sb, struct runtime_error *err)
{
	err->status = 500;
	struct sandbox_rt *rt = sb->rt;
	char why[256] = "";
	if (runtime_cgroup_make(&rt->cg, sb->id, sb->memory_mb, sb->cpu_count) != 0) {
		snprintf(err->message, sizeof err->message, "cannot create the sandbox's cgroups: %s",
			strerror(errno));
	} else if (runtime_overlay_mount(sb, rt, err) != 0) {
		/* err says why */
	} else if (runtime_volumes_mount(sb, why, sizeof why) != 0) {
		snprintf(err->message, sizeof err->message, "%s", why);
	} else {
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->message);
	return -1;
}

int runtime_sandbox_build(struct sandbox *sb, struct runtime_error *err)
{
	if (!runtime_isolated())
		return 0;
	if (runtime_sandbox_mount(sb, err) != 0)
		return -1;
	err->status = 500;
	struct sandbox_rt *rt = sb->rt;
	char why[256] = "";
	if (runtime_clone_init(rt, why, sizeof why) != 0) {
		snprintf(err->message, sizeof err->message, "cannot start the sandbox: %s",
			why[0] ? why : strerror(errno));
	} else {
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->message);
	return -1; /* the caller removes it (runtime_sandbox_remove) or stops it again */
}

int runtime_sandbox_launch(struct sandbox *sb, struct runtime_error *err)
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

int runtime_sandbox_await(struct sandbox *sb, struct runtime_error *err)
{
	if (!sb->rt || sb->rt->report_fd < 0)
		return 0;
	char why[256] = "";
	if (runtime_clone_await(sb->rt, why, sizeof why) == 0) {
		/* Set up: from now on it starts the sandbox's commands. */
		if (sb->rt->niced && setpriority(PRIO_PROCESS, (id_t)sb->rt->init_pid, 0) == 0)
			sb->rt->niced = false;
		if (runtime_spawn_watch(sb) == 0)
			return 0;
		snprintf(why, sizeof why, "cannot watch its init");
	}
	err->status = 500;
	snprintf(err->message, sizeof err->message, "cannot start the sandbox: %s", why);
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->message);
	return -1;
}

int runtime_sandbox_start(struct sandbox *sb, struct runtime_error *err)
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
