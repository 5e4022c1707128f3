/* Starting a sandbox's init: cloned into new user, pid, mount, uts, ipc and
 * network namespaces by the owner of the sandbox's id range, given its id
 * maps and cgroups, then let go; it reports "ok" once it runs in its root.
 * Calls runtime_userns.c. */
#ifndef E2B_BACKEND_RUNTIME_CLONE_H
#define E2B_BACKEND_RUNTIME_CLONE_H

#include <stddef.h>

struct err;
struct sandbox_rt;

/* Starts rt's init (rt->init_pid) with its overlay (rt->root_fd) as root
 * and lets it go: 0 with its report pipe in rt->report_fd, -1 with what
 * failed in err. It and runtime_clone_await set status 500, for the create's answer. */
int runtime_clone_init(struct sandbox_rt *rt, struct err *err);
/* The init rt->init_pid (a pidfd) and its namespaces (rt->ns_fd): for a
 * cloned one while it waits for "go", for a restored one (runtime_checkpoint.c)
 * while its parent, the backend, has not reaped it. 0, or -1 with errno. */
int runtime_clone_open_namespaces(struct sandbox_rt *rt);
/* Reads the init's report until it ends (blocking, at most 10 s; at once
 * when rt->report_fd is readable): 0 once it said "ok"; -1 with what failed
 * in err. Closes rt->report_fd either way. */
int runtime_clone_await(struct sandbox_rt *rt, struct err *err);

#endif
