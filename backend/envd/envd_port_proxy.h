/* The proxy to other ports of a sandbox (docs/e2b-protocol-notes.md,
 * "Reaching envd"): a request routed to port P (E2b-Sandbox-Port, or a
 * "<P>-<id>" host) is forwarded to 127.0.0.1:P inside the sandbox's network
 * namespace (runtime_socket).
 *
 * Once the connection to the port is up, the client connection is taken
 * over from evhttp and bytes flow both ways unchanged, so responses of any
 * size stream and WebSocket (or any Upgrade) keeps working. The request is
 * sent with "Connection: close" (unless it is an upgrade), so one client
 * connection carries one proxied exchange. Each direction stops reading
 * while the other side has more than PORT_PROXY_HIGH_WATER unsent.
 *
 * When nothing listens, the answer is the proxy's 502
 * {"sandboxId","message":"The sandbox is running but port is not open","port","code":502}. */
#ifndef E2B_BACKEND_PORT_PROXY_H
#define E2B_BACKEND_PORT_PROXY_H

#include "envd/envd_routes.h"

#define PORT_PROXY_HIGH_WATER (1024 * 1024)

/* Starts forwarding; the answer comes later. Returns the status sent, or
 * ENVD_STATUS_PENDING (the request is logged once the port answers). */
int port_proxy_start(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb,
	long port);

/* Ends every proxied exchange; called before the envd listener is freed. */
void port_proxy_shutdown(void);

/* The 502 for a running sandbox with nothing on port. */
int port_proxy_reply_closed(struct evhttp_request *req, const char *id, long port);

#endif
