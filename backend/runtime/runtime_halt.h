/* Halting a sandbox at shutdown: every process of it killed at once,
 * nothing waited for. A stop (runtime_sandbox_stop) waits for the
 * sandbox's init, and the init of a pid namespace ends only once every
 * process forked into it from outside (setns and fork: the backend's own
 * commands) has been reaped by its parent, the backend. At shutdown the
 * loop no longer reaps them: so every sandbox is halted first, the
 * backend's children are reaped (process_manager_reap), and only then are
 * the sandboxes stopped. Calls runtime_cgroup.c and lib/. */
#ifndef E2B_BACKEND_RUNTIME_HALT_H
#define E2B_BACKEND_RUNTIME_HALT_H

struct sandbox;

/* SIGKILLs every process of sb while it may still be frozen (a paused
 * sandbox runs no instruction more), then thaws it so that they die, and
 * SIGKILLs its init (the kernel then kills its whole pid namespace).
 * Returns at once; a sandbox that is cold (nothing runs) is left alone. */
void runtime_sandbox_halt(struct sandbox *sb);

#endif
