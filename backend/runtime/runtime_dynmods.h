/* Cgroup migrations without an RCU grace period. Moving a process into a
 * cgroup (cgroup v1 has no CLONE_INTO_CGROUP, so every sandbox init and
 * every command is moved into its sandbox's cgroups) takes the kernel's
 * global threadgroup rwsem for writing, and the first writer after about
 * 20 ms without one waits for an RCU grace period: 5 to 30 ms on the
 * machines we measured, paid by a create and by every command started on a
 * sandbox that ran nothing for a moment (docs/PERFORMANCE.md). The kernel's
 * "favordynmods" mode (Linux 6.0+) keeps that rwsem ready for writers at
 * the price of a memory barrier in every fork and exit on the machine.
 * The mode is a property of a cgroup hierarchy: the backend mounts a named
 * hierarchy of its own, with no controllers, at <state>/cgroup-dynmods and
 * unmounts it at exit (the kernel may keep the mode until the hierarchy's
 * last reference goes). Full isolation only; --cgroup-favor-dynmods off
 * leaves the kernel alone. Calls nothing of the backend. */
#ifndef E2B_BACKEND_RUNTIME_DYNMODS_H
#define E2B_BACKEND_RUNTIME_DYNMODS_H

#include <stdbool.h>

/* Mounts the hierarchy, in the backend's private mount namespace (so a
 * killed backend leaves no mount, only the empty directory, reused). A
 * kernel without the mode is no error: one line on stderr, and
 * runtime_dynmods_active() stays false. */
void runtime_dynmods_start(const char *state_root);
void runtime_dynmods_stop(void);
/* For the ready line and /health. */
bool runtime_dynmods_active(void);

#endif
