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
 * Update are unary. Each has the envd_handler signature;
 * ctx->process_manager is the struct proc_manager. */
#ifndef E2B_BACKEND_PROCESS_RPC_H
#define E2B_BACKEND_PROCESS_RPC_H

#include "envd/envd_routes.h"

int process_rpc_start(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_connect(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_list(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_send_input(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_send_signal(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_close_stdin(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int process_rpc_update(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
