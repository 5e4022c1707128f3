/* The processes of every sandbox (envd's process.Process service, reference
 * §4): spawning, output streaming, input, signals, reaping and the
 * sandbox lifecycle rules (pause stops them, resume continues them, kill
 * SIGKILLs them). The backend is not a VM: processes run as the backend's
 * own uid, each in its own session and process group, with the sandbox
 * directory as HOME and default working directory.
 *
 * The RPC handlers are in process_rpc.h; this is what main.c wires up. */
#ifndef E2B_BACKEND_PROCESS_MANAGER_H
#define E2B_BACKEND_PROCESS_MANAGER_H

struct event_base;
struct proc_manager;
struct registry_hooks;

/* Installs the SIGCHLD handler on base. NULL on failure. */
struct proc_manager *proc_manager_new(struct event_base *base);

/* The paused/resumed/removing hooks for registry_add_hooks (ctx = pm). */
void proc_manager_registry_hooks(struct proc_manager *pm, struct registry_hooks *hooks);

/* SIGKILLs every process group still running, reaps every child (blocking)
 * and frees everything. Call after the HTTP servers are freed (their open
 * streams are detached by then) and after registry_free. */
void proc_manager_free(struct proc_manager *pm);

#endif
