/* The runtime's own state, shared by the files of runtime/ and private to
 * them (no file outside runtime/ includes this header): each sandbox's
 * runtime state (sandbox.rt) and the runtime itself (struct runtime: the
 * isolation mode, paths, this backend's cgroups), which runtime_init fills
 * and runtime_shutdown empties, reached through runtime_self(). */
#ifndef E2B_BACKEND_RUNTIME_STATE_H
#define E2B_BACKEND_RUNTIME_STATE_H

#include "runtime/runtime.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_ids.h"

#include <stdbool.h>
#include <sys/types.h>

struct event;

/* The init's namespaces a command joins, in the order it joins them (the
 * user namespace first: it owns the others); pid last, joined by the
 * backend itself for a helper child (signal_all, runtime.c). */
enum {
	RT_NS_USER,
	RT_NS_UTS,
	RT_NS_IPC,
	RT_NS_NET,
	RT_NS_MNT,
	RT_NS_PID,
	RT_NNS
};

/* A sandbox's writable layer: an ext4 image (<dir>/disk.img) on a loop
 * device, mounted at <dir>/disk (runtime_disk.h). */
struct runtime_disk {
	int loop; /* /dev/loop<N> holding the image; -1 none */
	bool mounted;
};

/* One sandbox's runtime state (sandbox.rt); NULL without isolation. */
struct sandbox_rt {
	pid_t init_pid; /* host pid of the sandbox's pid 1 */
	int report_fd;  /* the init's report pipe until it said "ok" (runtime_sandbox_launch); -1 after */
	struct runtime_ids ids; /* its user namespace's map; slot -1 when none was taken */
	char *rootfs;           /* <dir>/rootfs, the overlay's merged directory */
	int lowers_mounted;     /* <dir>/lower0.. : its layers, mounted (idmapped) read-only */
	bool mounted;
	int root_fd;              /* O_PATH of rootfs: paths are resolved beneath it */
	int ns_fd[RT_NNS];        /* the init's namespaces, opened at its clone (runtime_clone.c); else -1 */
	int init_pidfd;           /* the init itself (pidfd_open), readable once it has ended; -1 none */
	int req_fd, ev_fd;        /* the init's requests and events sockets (runtime_spawn.h); -1 none */
	struct event *ev_watch;   /* on ev_fd, from its report of "ok" on */
	bool niced;               /* set up in the background (runtime_sandbox_setup_in_background) */
	struct runtime_cgroup cg; /* its cgroups (runtime_cgroup.h); none without */
	struct runtime_disk disk; /* where upper/ and work/ live: its size is the limit; loop -1 rootless */
	bool kept;   /* adopted from an earlier run: disk and upper exist (runtime_sandbox_adopt) */
	bool rebase; /* kept, in another id range than its files: they move at start */
};

struct runtime {
	enum isolation mode; /* FULL, ROOTLESS or NONE once runtime_init ran */
	bool single_id;      /* rootless with one id: every account runs as 0 */
	char *templates_dir;
	char *state_root;
	char *init_path;
	int init_fd;                    /* O_PATH of e2b-sandbox-init */
	struct runtime_cgroups cgroups; /* this backend's (runtime_cgroup.h) */
	int self_pid_ns;
	int cwd_fd; /* the backend's working directory, to return to */
	struct event_base *base;
};
/* The backend's one runtime. */
struct runtime *runtime_self(void);
/* Back to the state before runtime_init: nothing open, no isolation. */
void runtime_self_reset(void);

#endif
