/* The sandboxes' cgroups, one interface over both hierarchies: cgroup v1
 * (a hierarchy per controller, runtime_cgroup_v1.c) and cgroup v2 (one
 * unified hierarchy, runtime_cgroup_v2.c), chosen at start by what
 * /sys/fs/cgroup is (runtime_cgroup_version_of). What a sandbox's cgroup
 * gives: its memory, pids and cpu limits, the device nodes it may open
 * (runtime_devices.h), pause (the freezer), killing everything in it, and
 * its usage for metrics. Rootless, a sandbox has a cgroup only on v2, where
 * the machine delegates a subtree to the user (runtime_cgroup_enter.h);
 * then with the limits of the controllers delegated. A sandbox without one
 * has every field NULL / -1, and each function here is a no-op on it.
 * Calls runtime_cgroup_v1.c and runtime_cgroup_v2.c through their tables. */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_H
#define E2B_BACKEND_RUNTIME_CGROUP_H

#include "runtime/runtime_cgroup_parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct err;

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_GROUP "e2b-local" /* v1: <root>/<ctrl>/e2b-local/b<backend pid>/<sandbox id> */

/* cgroup v1's controllers, a hierarchy each. cpuacct only for metrics: a
 * hierarchy of its own on some machines, mounted with cpu on others (then
 * both paths are one). */
enum {
	RT_MEMORY,
	RT_PIDS,
	RT_CPU,
	RT_FREEZER,
	RT_DEVICES,
	RT_CPUACCT,
	RT_NCTRL
};
extern const char *const rt_controllers[RT_NCTRL];

/* One sandbox's cgroups. */
struct runtime_cgroup {
	char *dir[RT_NCTRL];    /* v1: one directory per controller; v2: dir[0] alone */
	int procs_fd[RT_NCTRL]; /* v1: each cgroup.procs, where a child writes "0" to join */
	int pids_fd;            /* pids.current, read with pread; -1 without a pids limit */
	int dir_fd;             /* v2: the directory, which children are cloned into (CLONE_INTO_CGROUP) */
};

/* A sandbox's usage so far. */
struct runtime_cgroup_usage {
	uint64_t cpu_ns; /* CPU time of all its processes */
	uint64_t memory; /* bytes charged to it, page cache included */
	uint64_t cache;  /* the page cache (and tmpfs) among them */
};

/* What the backend's cgroups are (runtime_self()->cgroups), settled by runtime_cgroup_init. */
struct runtime_cgroups {
	enum runtime_cgroup_version version; /* NONE: sandboxes get no cgroup */
	bool memory, pids, cpu;              /* the limits a sandbox's cgroup gets */
	const char *
		devices; /* how device nodes are restricted: "cgroup" (v1), "bpf" (v2); NULL not by a cgroup */
	char *parent[RT_NCTRL]; /* v1: <root>/<ctrl>/e2b-local/b<pid>; v2: parent[0], <home>/b<owner> */
	char *home;             /* v2: where backends make their b<pid> (runtime_cgroup_enter.h) */
	char *started;          /* v2: the cgroup to return to at exit (the root's), NULL: none */
	pid_t owner;            /* the <pid> of b<pid> */
	bool entered;           /* v2: the backend runs in <parent>/backend */
	int devices_prog;       /* v2: the loaded devices program; -1 none */
};

/* Each hierarchy's side of the interface below. */
struct runtime_cgroup_ops {
	int (*init)(bool full, bool (*alive)(pid_t pid), struct err *err);
	void (*shutdown)(void);
	int (*make)(struct runtime_cgroup *cg, const char *id, int memory_mb, int cpu_count);
	int (*freeze)(const struct runtime_cgroup *cg, bool frozen);
	void (*kill)(const struct runtime_cgroup *cg);
	void (*drain)(const struct runtime_cgroup *cg);
	int (*usage)(const struct runtime_cgroup *cg, struct runtime_cgroup_usage *out);
};

/* At start: which hierarchy, and (full) checks that every piece is there,
 * removes the cgroups of backends that are gone (alive(pid) says whether
 * a backend's pid is still one), makes this backend's own. 0 ok; else -1
 * with why not in err (status an errno, or 0): full isolation is then
 * refused; rootless goes on without cgroups (the reason is printed). */
int runtime_cgroup_init(bool full, bool (*alive)(pid_t pid), struct err *err);
/* Removes this backend's own cgroups (each sandbox's drained already). */
void runtime_cgroup_shutdown(void);
/* Whether children are moved into their cgroups after the fact (v1: no
 * CLONE_INTO_CGROUP): what runtime_dynmods.h speeds up. */
bool runtime_cgroup_migrates(void);

/* No cgroups yet: every field NULL / -1. */
void runtime_cgroup_none(struct runtime_cgroup *cg);
/* Makes the sandbox's cgroups with its limits, its device list included.
 * 0, or -1 with errno (whatever was made stays in cg: drain it). */
int runtime_cgroup_make(struct runtime_cgroup *cg, const char *id, int memory_mb, int cpu_count);
/* The descriptor a child is cloned into (CLONE_INTO_CGROUP); -1 when it
 * joins its cgroups by writing cgroup.procs (v1) or there are none. */
int runtime_cgroup_clone_fd(const struct runtime_cgroup *cg);
/* v1: puts pid into every cgroup of the sandbox (its cgroup.procs). 0, or
 * -1 with the first failure's errno (each but ESRCH, a child that has
 * ended already, is also printed). */
int runtime_cgroup_attach(const struct runtime_cgroup *cg, pid_t pid);
/* v1, in a child about to execute, with nothing but system calls: joins
 * the sandbox's cgroups. 0, -1 with errno. */
int runtime_cgroup_join(const struct runtime_cgroup *cg);
/* pids.current; -1 when it cannot be read or there is no pids limit. */
long runtime_cgroup_pids(const struct runtime_cgroup *cg);
/* Whether the kernel checks pids.max at a child's start (v2's
 * CLONE_INTO_CGROUP): else the backend checks before and after (v1). */
bool runtime_cgroup_checks_pids(const struct runtime_cgroup *cg);
/* Freezes or thaws every process in it and waits until the kernel says so
 * (at most a few seconds). 0; -1 with errno; 1 when there is no freezer
 * (no cgroup): the caller stops the processes itself. */
int runtime_cgroup_freeze(const struct runtime_cgroup *cg, bool frozen);
/* Before the sandbox's init is killed: v1 thaws (frozen tasks die only
 * once thawed), v2 kills everything in it at once (cgroup.kill). */
void runtime_cgroup_kill(const struct runtime_cgroup *cg);
/* Kills whatever is left, waits until it is empty and removes it: by
 * paths only (the cleaner's thread, descriptors closed). */
void runtime_cgroup_drain(const struct runtime_cgroup *cg);
/* Its usage: 0, or -1 when it has no memory controller or cannot be read. */
int runtime_cgroup_usage(const struct runtime_cgroup *cg, struct runtime_cgroup_usage *out);
/* Closes its descriptors (paths stay, for runtime_cgroup_drain). */
void runtime_cgroup_close(struct runtime_cgroup *cg);
/* Closes and frees everything. */
void runtime_cgroup_free(struct runtime_cgroup *cg);

#endif
