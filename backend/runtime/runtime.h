/* The sandbox runtime: what makes a sandbox of the local backend a sandbox.
 *
 * With full isolation every sandbox has an overlay root (its template's root
 * filesystem read-only below, its own writable layer above, under
 * <state-dir>/sandboxes/<id>/), one init process (pid 1 of its own pid, mount,
 * uts, ipc and network namespaces), and cgroups (memory, pids, cpu, freezer)
 * that hold every process of the sandbox. Commands enter those namespaces and
 * cgroups and run as a user of the sandbox's own /etc/passwd. With
 * --isolation none, commands run on the host as the backend's user, in the
 * sandbox's directory (the backend before the runtime existed).
 *
 * The backend is single-threaded; these functions are called from its loop. */
#ifndef E2B_BACKEND_SANDBOX_RUNTIME_H
#define E2B_BACKEND_SANDBOX_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox;
struct event_base;

/* --- for other parts of the backend (files API, port proxy) ------------------ */

/* Absolute host path of the directory that is "/" for the sandbox's commands
 * (the overlay's merged directory). Valid while sb exists (until its
 * `removing` hook). With --isolation none it is "/": commands see the host's
 * root, and their home is sb->dir. */
const char *sandbox_rootfs(const struct sandbox *sb);
/* socket(2) created inside the sandbox's network namespace (the host's when
 * isolation is none); -1 with errno. Used by the port proxy to connect to
 * 127.0.0.1:<port> as the sandbox sees it. The socket is close-on-exec. */
int sandbox_socket(const struct sandbox *sb, int domain, int type, int protocol);
/* Accounts from the sandbox's own /etc/passwd and /etc/group (read inside its
 * root, symbolic links resolved within it). 0 ok, -1 unknown. With
 * --isolation none there are no accounts of the sandbox's own: by_name maps
 * any name to the backend's uid/gid with home sb->dir (which names envd
 * accepts is checked in process_rpc.c), and the other three answer -1. */
int sandbox_user_by_name(const struct sandbox *sb, const char *name, uid_t *uid, gid_t *gid,
	char *home, size_t home_len);
int sandbox_user_name(const struct sandbox *sb, uid_t uid, char *buf, size_t len);
int sandbox_group_by_name(const struct sandbox *sb, const char *name, gid_t *gid);
int sandbox_group_name(const struct sandbox *sb, gid_t gid, char *buf, size_t len);

/* --- the runtime itself (main.c, registry.c, the process manager) ------------- */

enum isolation { ISOLATION_AUTO, ISOLATION_FULL, ISOLATION_NONE };

#define SANDBOX_DEFAULT_CPU_COUNT 2
#define SANDBOX_DEFAULT_MEMORY_MB 512
#define SANDBOX_MIN_MEMORY_MB 128   /* E2B's own floor; below it a shell may not start */
#define SANDBOX_MAX_MEMORY_MB 65536
#define SANDBOX_MAX_CPU_COUNT 64
#define SANDBOX_DEFAULT_DISK_SIZE_MB 1024 /* diskSizeMB: reported, not enforced */
#define SANDBOX_MAX_DISK_SIZE_MB (1024 * 1024)
#define SANDBOX_PIDS_MAX 1024       /* per sandbox: what stops a fork bomb */
/* PATH of a sandbox's commands (the host's PATH means nothing there). */
#define SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Checks the kernel, the templates and the init binary; cleans what a killed
 * earlier backend left behind (cgroups, mounts, directories). requested AUTO
 * falls back to NONE with a note on stderr; FULL fails with a message.
 * 0 ok, -1 (message printed). */
int runtime_init(struct event_base *base, enum isolation requested, const char *templates_dir,
	const char *state_root);
/* Waits for every removal still running; nothing of a sandbox remains after. */
void runtime_shutdown(void);
bool runtime_isolated(void);
const char *runtime_isolation_name(void);

/* Typed refusal of a create request: 404 unknown template, 400 bad limits. */
struct runtime_error {
	int status;
	char message[256];
};
int runtime_check_create(const char *template_id, int cpu_count, int memory_mb,
	struct runtime_error *err);
/* Starts the sandbox (overlay, cgroups, init) in its existing directory sb->dir.
 * -1 with err set (the directory's contents are cleaned up again). */
int runtime_sandbox_start(struct sandbox *sb, struct runtime_error *err);
/* Freezes / thaws every process of the sandbox (cgroup freezer). */
int runtime_sandbox_freeze(struct sandbox *sb, bool frozen);
/* Kills every process of the sandbox and removes its directory, cgroups and
 * mount off the event loop (a forked cleaner). sb->dir is gone afterwards,
 * as far as the caller is concerned. */
void runtime_sandbox_remove(struct sandbox *sb);

/* For process spawning (proc_spawn.c). A user resolved in the sandbox. */
struct sandbox_user {
	uid_t uid;
	gid_t gid;
	gid_t groups[32];
	int ngroups;
	char name[64];
	char home[256];
};
int sandbox_user_resolve(const struct sandbox *sb, const char *name, struct sandbox_user *u);
/* Whether path (absolute, inside the sandbox) is an existing directory there:
 * 1 directory, 0 exists but not a directory, -1 missing (errno). */
int sandbox_path_is_dir(const struct sandbox *sb, const char *path);
/* In the parent, around fork(): the next child is born in the sandbox's pid
 * namespace. enter returns -1 with errno; leave always restores the backend's
 * and puts child (if > 0) into the sandbox's cgroups. */
int runtime_fork_enter(const struct sandbox *sb);
void runtime_fork_leave(const struct sandbox *sb, pid_t child);
/* In the forked child, before exec: joins the cgroups and namespaces, drops
 * privileges the sandbox must not have, becomes user u. -1 with errno. */
int runtime_child_enter(const struct sandbox *sb, const struct sandbox_user *u);
/* The pid the sandbox's own /proc shows for a host pid (itself when not isolated). */
pid_t runtime_ns_pid(const struct sandbox *sb, pid_t host_pid);

#endif
