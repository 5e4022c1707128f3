/* Private to the sandbox runtime: runtime.c (start, create, freeze),
 * runtime_remove.c (removal), runtime_leftovers.c (what a dead backend left)
 * and runtime_enter.c (entering a sandbox, its users and paths). */
#ifndef E2B_BACKEND_RUNTIME_INTERNAL_H
#define E2B_BACKEND_RUNTIME_INTERNAL_H

#include "runtime/runtime.h"

#include <stdbool.h>
#include <sys/types.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_GROUP "e2b-local"  /* <root>/<ctrl>/e2b-local/b<backend pid>/<sandbox id> */

enum { RT_MEMORY, RT_PIDS, RT_CPU, RT_FREEZER, RT_NCTRL };
extern const char *const rt_controllers[RT_NCTRL];

/* One sandbox's runtime state (sandbox.rt); NULL without isolation. */
struct sandbox_rt {
	pid_t init_pid;          /* host pid of the sandbox's pid 1 */
	char *rootfs;            /* <dir>/rootfs, the overlay's merged directory */
	bool mounted;
	int root_fd;             /* O_PATH of rootfs: paths are resolved beneath it */
	int procs_fd[RT_NCTRL];  /* cgroup.procs of each controller: a child writes "0" */
	char *cg[RT_NCTRL];      /* the sandbox's cgroup directories */
};

struct runtime_globals {
	enum isolation mode;     /* FULL or NONE once runtime_init ran */
	char *templates_dir;
	char *state_root;
	char *init_path;
	int init_fd;             /* O_PATH of e2b-sandbox-init */
	char *cg_parent[RT_NCTRL];
	int self_pid_ns, self_net_ns;
	struct event_base *base;
};
extern struct runtime_globals rt_g;

/* runtime.c */
void rt_sleep_ms(long ms);
/* Writes text to dir/file (a cgroup control file). 0 ok, -1 with errno. */
int rt_write_at(const char *dir, const char *file, const char *text);
void rt_free(struct sandbox_rt *rt);

/* runtime_leftovers.c */
/* Thaws, kills everything in and removes one sandbox's cgroups (NULL entries skipped). */
void rt_drain_cgroup(const char *const dirs[RT_NCTRL]);
void rt_clean_stale_cgroups(void);
/* Also records this backend's pid in state_root/backend.pid. */
void rt_clean_stale_dirs(const char *state_root);

/* runtime_remove.c */
/* Blocks until every cleaner has finished. */
void rt_wait_cleaners(void);

#endif
