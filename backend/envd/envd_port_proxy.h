/* The proxy to other ports of a sandbox (docs/e2b-protocol-notes.md,
 * "Reaching envd"): a request routed to port P (E2b-Sandbox-Port, or a
 * "<P>-<id>" host) is forwarded to 127.0.0.1:P inside the sandbox's network
 * namespace (runtime_socket).
 *
 * The gate (http_gate.h) hands such a request over at its head (verdict
 * RAW): nothing of its body has been read. Once the connection to the port
 * is up, the client connection is taken over from evhttp. The head is sent
 * with "Connection: close", then the body exactly as the client frames it
 * (Content-Length or chunked) and nothing after it: one client connection
 * carries one exchange, and a pipelined request or stray bytes never reach
 * the port. An Upgrade (WebSocket) request becomes a tunnel instead: bytes
 * flow both ways unchanged. Responses of any size stream. Each direction
 * stops reading while the other side has more than PORT_PROXY_HIGH_WATER
 * unsent. A connection silent both ways for --proxy-idle-timeout is closed,
 * and every one of a sandbox is cut when it is killed (the tracker's
 * http_conns_close_sandbox frees it; the proxy lets go).
 *
 * When nothing listens, the answer is the proxy's 502
 * {"sandboxId","message":"The sandbox is running but port is not open","port","code":502}. */
#ifndef E2B_BACKEND_PORT_PROXY_H
#define E2B_BACKEND_PORT_PROXY_H

#include "envd/envd_routes.h"

#define PORT_PROXY_HIGH_WATER (1024 * 1024)

/* Starts forwarding; the answer comes later. Returns the status sent, or
 * ENVD_STATUS_PENDING (the request is logged once the port answers). */
int port_proxy_start(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb, long port);

/* Ends every proxied exchange; called before the envd listener is freed. */
void port_proxy_shutdown(void);

/* The 502 for a running sandbox with nothing on port. */
int port_proxy_reply_closed(struct evhttp_request *req, const char *id, long port);

#endif
