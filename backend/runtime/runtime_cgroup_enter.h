/* Where a backend's cgroups live on cgroup v2, and moving the backend into
 * a leaf of its own there, before it starts anything (rootless: before it
 * forks into its namespaces, so that the process left outside is in the
 * leaf too).
 *
 * cgroup v2 puts no process in a cgroup whose controllers are enabled for
 * its children ("no internal processes"), so the backend cannot stay in the
 * cgroup it was started in and make the sandboxes' below it. It makes
 *   <home>/b<pid>/backend   its own leaf, where it moves itself
 *   <home>/b<pid>/<id>      each sandbox's (runtime_cgroup_v2.c)
 * <pid> is the pid of the process started (rootless, the one that stays
 * outside the backend's namespaces and forwards signals: it lives as long
 * as the backend, and is in the leaf too; cgroup v2 renames no cgroup).
 * with memory, pids and cpu enabled in <home> and <home>/b<pid>. <home> is
 * the cgroup it was started in (a delegated one: a systemd unit or scope
 * with Delegate=yes, a user's own subtree), which must then hold no other
 * process; or, when it was started in the root cgroup (no systemd: a
 * container, a plain VM), /sys/fs/cgroup/e2b-local, made by root. A user
 * other than root uses its cgroup only where it is writable by the user
 * (delegated), with the controllers delegated to it.
 *
 * Calls runtime_control.c and runtime_cgroup_parse.c. */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_ENTER_H
#define E2B_BACKEND_RUNTIME_CGROUP_ENTER_H

#include <stdbool.h>

struct err;

/* On cgroup v2 (nothing otherwise, and nothing the second time): finds
 * <home>, checks it, makes <home>/b<pid>/backend, moves this process there
 * and enables the controllers; records all of it in runtime_self()->cgroups. full:
 * memory, pids and cpu are all required. 0 ok; else -1 with why not in err
 * (status an errno, or 0), naming the cgroup v2 piece that is missing. err
 * may be NULL. */
int runtime_cgroup_enter(bool full, struct err *err);

#endif
