/* cgroup v1 control files: writing one (or any control file, such as a
 * process's uid_map), the device nodes a sandbox may open, and draining a sandbox's cgroups (thaw, kill
 * everything in them, remove them); and two helpers every file of runtime/
 * may need (sleeping, a forked child's descriptors). The lowest file of
 * runtime/; calls only the kernel. */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_H
#define E2B_BACKEND_RUNTIME_CGROUP_H

#include "runtime/runtime_state.h"

void runtime_sleep_ms(long ms);
/* In a forked child (a cleaner, the disk helper): fd becomes 3, every other
 * descriptor above 2 is closed, stdin and stdout become /dev/null (stderr
 * stays the backend's log). Not the backend's stdout: whoever reads its
 * ready line must see the end of it when the backend exits, even if a child
 * is still busy. -1 when fd could not be moved. */
int runtime_child_fds(int fd);
/* Writes text to dir/file (a cgroup control file). 0 ok, -1 with errno. */
int runtime_write_at(const char *dir, const char *file, const char *text);
/* Makes dir (a devices cgroup without children) allow only the device
 * nodes a sandbox needs; groups made below it inherit that. 0 ok, -1 with errno. */
int runtime_restrict_devices(const char *dir);
/* Thaws, kills everything in and removes one sandbox's cgroups (NULL entries skipped). */
void runtime_drain_cgroup(const char *const dirs[RT_NCTRL]);

#endif
