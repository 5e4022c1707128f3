/* The sandboxes' cgroups on cgroup v1: one directory per controller,
 * /sys/fs/cgroup/<ctrl>/e2b-local/b<backend pid>/<sandbox id> (memory,
 * pids, cpu, freezer, devices, cpuacct). A child cannot start in them (v1
 * has no CLONE_INTO_CGROUP): every sandbox init and command is moved in by
 * writing its pid to each cgroup.procs. Full isolation only (v1 delegates
 * nothing to a user). Its side of runtime_cgroup.h's interface; calls
 * runtime_control.c, runtime_devices.c and runtime_cgroup_parse.c. */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_V1_H
#define E2B_BACKEND_RUNTIME_CGROUP_V1_H

#include "runtime/runtime_cgroup.h"

extern const struct runtime_cgroup_ops runtime_cgroup_v1_ops;

#endif
