/* The sandboxes' cgroups on cgroup v2: one directory each,
 * <home>/b<backend pid>/<sandbox id> (runtime_cgroup_enter.h), with
 * memory.max (memory.swap.max 0; v2 charges socket buffers to memory.max
 * by itself), pids.max and cpu.max where those controllers are enabled,
 * and the devices program (runtime_devices.h) attached. Every sandbox init
 * and command starts in it (clone3 with CLONE_INTO_CGROUP: the kernel
 * checks pids.max as the child is made, and nothing is moved). Pause is
 * cgroup.freeze, waited for through cgroup.events' "frozen 1"; removal is
 * cgroup.kill, waited for through "populated 0". Its side of
 * runtime_cgroup.h's interface; calls runtime_cgroup_enter.c,
 * runtime_control.c, runtime_devices.c and runtime_cgroup_parse.c. */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_V2_H
#define E2B_BACKEND_RUNTIME_CGROUP_V2_H

#include "runtime/runtime_cgroup.h"

extern const struct runtime_cgroup_ops runtime_cgroup_v2_ops;

/* Waits until dir/cgroup.events says key (populated, frozen) is value, at
 * most timeout_ms (poll(2) on the file, which the kernel signals at each
 * change). 0; -1 with errno (ETIMEDOUT, or the file's). */
int runtime_cgroup_v2_wait(const char *dir, const char *key, uint64_t value, int timeout_ms);

#endif
