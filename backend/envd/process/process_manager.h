/* The processes of every sandbox (envd's process.Process service,
 * docs/e2b-protocol-notes.md, "Process service"): spawning, output streaming,
 * input, signals, reaping and the sandbox lifecycle rules (pause stops them,
 * resume continues them, kill SIGKILLs them). The backend is not a VM:
 * processes run as the backend's own uid, each in its own session and process
 * group, with the sandbox directory as HOME and default working directory.
 *
 * The RPC handlers are in process_rpc.h; this is the table of processes and
 * what main.c wires up. It calls the input, spawn (status text) and timer
 * files, runtime/ and http/; a process's streams only through the
 * process_stream_ops it was given. */
#ifndef E2B_BACKEND_PROCESS_MANAGER_H
#define E2B_BACKEND_PROCESS_MANAGER_H

#include "envd/process/process_table.h"

struct event_base;
struct proc_spawned;
struct registry_hooks;

/* Installs the SIGCHLD handler on base; streams are the ops of
 * process_stream.c. NULL on failure. */
struct proc_manager *process_manager_new(struct event_base *base, const struct process_stream_ops *streams);

/* The paused/resumed/removing hooks for registry_add_hooks (ctx = pm). */
void process_manager_registry_hooks(struct proc_manager *pm, struct registry_hooks *hooks);

/* Shutdown: SIGKILLs every process group still running and reaps each
 * (blocking), once the sandboxes they run in are halted (registry_halt_all):
 * a sandbox's init ends only after its processes the backend forked into
 * it are reaped. Their ends reach no stream. */
void process_manager_reap(struct proc_manager *pm);
/* process_manager_reap, then frees everything. Call after the HTTP servers are freed (their open
 * streams are detached by then) and after registry_free. */
void process_manager_free(struct proc_manager *pm);

struct proc *process_find(struct proc_manager *pm, const struct sandbox *sb, uint32_t pid, const char *tag,
	bool ended);
/* Reads the process's output while it is neither paused nor blocked by a
 * stream over the high-water mark (p->blocked), and has a stream to take it
 * or has ended: with nobody reading, nothing is read, so a process that
 * writes without end cannot fill the backend's memory. */
void process_update_reading(struct proc *p);
void process_kill_group(struct proc *p, int sig);
/* Registers a freshly spawned process; takes config and tag. NULL when out of memory
 * (the process is then killed and reaped). */
struct proc *process_register(struct proc_manager *pm, struct sandbox *sb, const struct proc_spawned *sp,
	bool is_pty, struct cJSON *config, char *tag, int64_t lifetime_ms);

#endif
