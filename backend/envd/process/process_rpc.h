/* envd/process/ — envd's process.Process service.
 * Owns: the RPC handlers (process_rpc.c), the table of processes with
 * reaping and the sandbox lifecycle hooks (process_manager.c), spawning
 * (process_spawn.c), the Start/Connect streams (process_stream.c), input
 * (process_input.c) and pausable timers (process_timer.c). The shared
 * records are process_table.h.
 * May call: runtime/ (forking into a sandbox, its users), http/ (Connect),
 * lib/. Never envd/fs/ nor envd/ above it. Within the folder the order is
 * rpc > stream > manager > input, spawn, timer: the manager reaches the
 * streams only through the process_stream_ops main.c hands it.
 *
 * This file's handlers (docs/e2b-protocol-notes.md, "Process service"):
 * Start and Connect stream, List, SendInput, SendSignal, CloseStdin and
 * Update are unary. Each has the process_rpc_handler signature: envd's
 * router (envd_routes.c) gives it the process manager, and the running
 * sandbox the request is for. */
#ifndef E2B_BACKEND_PROCESS_RPC_H
#define E2B_BACKEND_PROCESS_RPC_H

struct evhttp_request;
struct proc_manager;
struct sandbox;

/* Answers req (or starts its stream) and returns the status it sent. */
typedef int (*process_rpc_handler)(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);

int process_rpc_start(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_connect(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_list(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_send_input(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_send_signal(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_close_stdin(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_update(struct proc_manager *pm, struct evhttp_request *req, struct sandbox *sb);

#endif
