/* cgroup v1 control files: writing one (or any control file, such as a
 * process's uid_map), and draining a sandbox's cgroups (thaw, kill
 * everything in them, remove them); and sleeping, which every file of
 * runtime/ may need. The lowest file of runtime/; calls only the kernel. */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_H
#define E2B_BACKEND_RUNTIME_CGROUP_H

#include "runtime/runtime_state.h"

void runtime_sleep_ms(long ms);
/* Writes text to dir/file (a cgroup control file). 0 ok, -1 with errno. */
int runtime_write_at(const char *dir, const char *file, const char *text);
/* Thaws, kills everything in and removes one sandbox's cgroups (NULL entries skipped). */
void runtime_drain_cgroup(const char *const dirs[RT_NCTRL]);

#endif
