/* The sandbox runtime: what makes a sandbox of the local backend a sandbox.
 *
 * With full isolation every sandbox has an overlay root (its template's root
 * filesystem read-only below, its own writable layer above, under
 * <state-dir>/sandboxes/<id>/ on a disk image of its diskSizeMB), one init
 * process (pid 1 of its own user, pid, mount, uts, ipc and network
 * namespaces; the user namespace maps its ids onto a host id range of its
 * own, runtime_ids.h), and cgroups (memory, pids, cpu, freezer; v1 or v2,
 * runtime_cgroup.h) that hold every process of the sandbox. Commands enter
 * those namespaces and cgroups and run as a user of the sandbox's own
 * /etc/passwd. Rootless (the backend started by another user than root) is
 * the same inside the backend's own user namespace (runtime_rootless.h),
 * without disk images, and with cgroups only where cgroup v2 delegates a
 * subtree to the user. With
 * --isolation none, commands run on the host as the backend's user, in the
 * sandbox's directory (the backend before the runtime existed).
 *
 * runtime/ owns: that isolation (namespaces, cgroups, the overlay root and
 * the disk image its writable layer lives on, the syscall policy, pid 1's
 * program in init/), the accounts of a sandbox, entering it, removing it and
 * what a dead backend left, and the type struct sandbox (runtime_sandbox.h),
 * which the registry fills. It may call: lib/ only, and libseccomp (never
 * the registry). Called by main.c,
 * registry/ (start, freeze, remove), envd/ (process spawning, files, port
 * proxy) and api/ (may this sandbox be created?).
 *
 * This header is runtime.c's: the isolation mode and the sandbox lifecycle.
 * runtime_enter.h (a sandbox's root, sockets in it, forking into it) and
 * runtime_users.h (its accounts) are what the rest of the backend uses to
 * reach into a sandbox; runtime_remove.h is removal, runtime_halt.h the
 * shutdown's kill of every process of a sandbox, runtime_disk.h a
 * sandbox's disk, runtime_overlay.h its root over a stack of layers (and
 * where its writable layer is, for sealing it into a layer of the store); runtime_seccomp.h is the syscall policy (main.c and api/
 * report whether it is on).
 *
 * The backend is single-threaded; these functions are called from its loop. */
#ifndef E2B_BACKEND_RUNTIME_H
#define E2B_BACKEND_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct err;
struct sandbox;
struct event_base;

enum isolation {
	ISOLATION_AUTO,
	ISOLATION_FULL,
	ISOLATION_ROOTLESS,
	ISOLATION_NONE
};

#define SANDBOX_DEFAULT_CPU_COUNT 2
#define SANDBOX_DEFAULT_MEMORY_MB 512
#define SANDBOX_MIN_MEMORY_MB 128 /* E2B's own floor; below it a shell may not start */
#define SANDBOX_MAX_MEMORY_MB 65536
#define SANDBOX_MAX_CPU_COUNT 64
#define SANDBOX_DEFAULT_DISK_SIZE_MB 1024 /* diskSizeMB: the writable layer's size (runtime_disk.h) */
#define SANDBOX_MIN_DISK_SIZE_MB 64       /* below it an ext4 image holds little more than itself */
#define SANDBOX_MAX_DISK_SIZE_MB (1024 * 1024)
#define SANDBOX_PIDS_MAX 1024 /* per sandbox: what stops a fork bomb */
/* PATH of a sandbox's commands (the host's PATH means nothing there). */
#define SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Checks the kernel, the templates and the init binary; cleans what a killed
 * earlier backend left behind (cgroups, mounts, directories). requested is
 * what runtime_rootless_prepare settled (AUTO as root means FULL); AUTO never
 * becomes NONE: a mode that cannot be had fails with a message. 0 ok, -1
 * (message printed). */
int runtime_init(struct event_base *base, enum isolation requested, const char *templates_dir,
	const char *state_root);
/* Waits for every removal still running; nothing of a sandbox remains after. */
void runtime_shutdown(void);
/* Whether sandboxes are isolated (full or rootless). */
bool runtime_isolated(void);
/* "full", "rootless" or "none": the ready line's and /health's isolation. */
const char *runtime_isolation_name(void);
/* Which limits sandboxes get: the ready line's and /health's "limits". */
struct runtime_limits {
	bool memory, pids, cpu; /* their cgroup's */
	bool disk;              /* a disk image of diskSizeMB (full isolation) */
	const char *devices;    /* what keeps device nodes out of reach: "cgroup" (v1's
	                          * devices controller), "bpf" (a cgroup v2 device program),
	                          * "userns" (rootless: the user namespace); NULL nothing */
};
void runtime_limits(struct runtime_limits *out);
/* "v1" or "v2": the cgroup hierarchy sandboxes' cgroups are in; NULL none. */
const char *runtime_cgroup_hierarchy(void);
/* The directory their cgroups are made in (v1: the pids controller's), for
 * the ready line; NULL none. */
const char *runtime_cgroup_sandboxes(void);
/* Whether isolation is full (root: disk images, an id range per sandbox). */
bool runtime_full(void);
/* Whether children are moved into their sandbox's cgroups after they
 * start (cgroup v1), which runtime_dynmods.h speeds up. */
bool runtime_migrates(void);
/* This backend's pid as the machine sees it (rootless, it is pid 1 of its
 * own pid namespace). */
pid_t runtime_host_pid(void);

/* Whether a create request may go on: -1 with err's status the HTTP answer
 * (404 unknown template, 400 bad limits, 507 a disk larger than the host's
 * free space). The functions below that start a sandbox also set an HTTP
 * status (500, 503 no id range left, 507 the host's disk is full). */
int runtime_check_create(const char *template_id, int cpu_count, int memory_mb, int disk_size_mb,
	struct err *err);
/* Starts the sandbox (disk, overlay, volumes, cgroups, init) in its existing
 * directory sb->dir; an adopted one on its own disk. -1 with err set.
 * runtime_sandbox_launch + runtime_sandbox_await. */
/* A reserved sandbox's cgroups, root and volumes (runtime_sandbox_build's
 * first part, before its init): 0, or -1 with err, printed. */
int runtime_sandbox_mount(struct sandbox *sb, struct err *err);

int runtime_sandbox_start(struct sandbox *sb, struct err *err);
/* The part that runs on the event loop: everything up to letting its init
 * go. The init then mounts its root on its own; until it reports,
 * runtime_sandbox_report_fd is the pipe it reports on (-1 when there is
 * nothing to wait for: no isolation). -1 with err set. */
int runtime_sandbox_launch(struct sandbox *sb, struct err *err);
/* runtime_sandbox_launch in two parts, for a caller that runs the second
 * off the loop (warm/): reserve takes what is shared (its id range, a disk
 * from the pool) and must run on the loop; build (the range's idmap user
 * namespace the first time it is used, cgroups, overlay, volumes, the
 * init's clone) touches only the sandbox's own state and may run on a
 * worker thread (lib/worker.h) whose working directory is its own. */
int runtime_sandbox_reserve(struct sandbox *sb, struct err *err);
int runtime_sandbox_build(struct sandbox *sb, struct err *err);
int runtime_sandbox_report_fd(const struct sandbox *sb);
/* Lowers the CPU priority of a launched sandbox's init while it sets up
 * (nice 19): one started ahead must not slow the commands of those in use.
 * runtime_sandbox_await gives it back (its commands inherit it); only as
 * root, which may. */
void runtime_sandbox_setup_in_background(const struct sandbox *sb);
/* Waits for the init's report (at once when the pipe is readable): 0 once
 * it said "ok" (its exit reports are then watched, runtime_spawn.h), else
 * -1 with err set. Either way the pipe is closed. */
int runtime_sandbox_await(struct sandbox *sb, struct err *err);
/* A sandbox an earlier backend left (its record says it existed, its
 * directory holds its disk image with its writable layer): takes its id
 * range (id_base, the files on its disk carry those ids) and nothing else;
 * it is cold, without processes or mounts, until runtime_sandbox_start
 * brings it up again on its own disk. 0, or -1 with err (status an errno). */
int runtime_sandbox_adopt(struct sandbox *sb, uid_t id_base, struct err *err);
/* Whether the sandbox was adopted and has not been started since. */
bool runtime_sandbox_cold(const struct sandbox *sb);
/* The host id of the sandbox's root (its range's first id); 0 without isolation. */
uid_t runtime_sandbox_id_base(const struct sandbox *sb);
/* Freezes / thaws every process of the sandbox (cgroup freezer; without a
 * cgroup, SIGSTOP and SIGCONT to each of them). */
int runtime_sandbox_freeze(struct sandbox *sb, bool frozen);
#endif
