/* What a backend that was killed (SIGKILL) left behind: its state
 * directory's sandbox directories and disk images, and loop devices still
 * holding those (its cgroups go with runtime_cgroup_init, which asks
 * runtime_backend_alive). Cleaned when any backend starts (runtime_init).
 * Calls runtime_control.c, runtime_disk_image.c and lib/. */
#ifndef E2B_BACKEND_RUNTIME_LEFTOVERS_H
#define E2B_BACKEND_RUNTIME_LEFTOVERS_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether pid is a live e2b-local-backend: what every cleaner of a dead
 * backend's leftovers asks (net/ too, for its table and address claim). */
bool runtime_backend_alive(pid_t pid);
/* Also records this backend's pid in state_root/backend.pid. */
void runtime_clean_stale_dirs(const char *state_root);

#endif
