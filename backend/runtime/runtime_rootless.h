/* Rootless isolation: a backend started by a user other than root puts
 * itself in a user namespace of its own before anything else, where it is
 * root over the user's subordinate ids (newuidmap/newgidmap; without them
 * over one id, the user's own), in private mount and pid namespaces. It is
 * then pid 1 of that pid namespace; the process that was started stays
 * outside as a forwarder of signals and of the exit status. Calls
 * runtime_control.c (control files), runtime_cgroup_enter.c (a cgroup v2
 * leaf, where the user has a delegated subtree) and the uidmap tools. */
#ifndef E2B_BACKEND_RUNTIME_ROOTLESS_H
#define E2B_BACKEND_RUNTIME_ROOTLESS_H

#include "runtime/runtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct runtime_rootless {
	bool entered;
	bool single_id;          /* no subordinate ids: the user's own id only */
	uid_t ids_base;          /* the subordinate ids, as this namespace sees them (1) */
	unsigned long ids_count; /* how many (at most 65536 are a sandbox's), 1 with a single id */
	pid_t host_pid;          /* this backend's pid outside its pid namespace */
	int host_proc_fd;        /* the machine's /proc (O_PATH), under this namespace's own */
	char user[64];
};

/* Decides the mode from the request and who runs the backend, before
 * anything else (it may fork): auto as root is full, as another user
 * rootless; full needs root, rootless a non-root user. Entering rootless
 * happens here. 0 with *mode settled (FULL, ROOTLESS or NONE), -1 with the
 * reason printed. */
int runtime_rootless_prepare(enum isolation *mode);
/* What runtime_rootless_prepare set up (entered is false unless rootless). */
const struct runtime_rootless *runtime_rootless_state(void);

#endif
