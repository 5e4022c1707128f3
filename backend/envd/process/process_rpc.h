/* The process.Process Connect-RPC methods on the envd listener (reference
 * §3, §4): Start and Connect stream, List, SendInput, SendSignal,
 * CloseStdin and Update are unary. Each handler has the envd_handler
 * signature; ctx->process_manager is the struct proc_manager. */
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

/* Parses Keepalive-Ping-Interval (seconds; fractions accepted) into ms:
 * the default 90 s when absent or unusable, at least PROC_KEEPALIVE_MIN_MS. */
long long process_keepalive_ms(const char *header);

#endif
