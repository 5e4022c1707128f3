/* Each sandbox's own envd listener: a port of its own on the envd host,
 * opened when the sandbox is created and closed (with every connection on
 * it) when it is killed. Requests there go to that sandbox's envd with no
 * E2b-Sandbox-Id header and no Host rules, so a host can call the URL
 * directly, as it calls https://49983-<id>.<domain> on E2B. The sandbox
 * reports it as envdUrl (ours: E2B has no such field). Same routes and
 * auth as the shared listener (envd_routes.h); paused answers the proxy's
 * 502 JSON. */
#ifndef E2B_BACKEND_ENVD_LISTENER_H
#define E2B_BACKEND_ENVD_LISTENER_H

struct envd_ctx;
struct http_conns;
struct registry_hooks;

struct envd_listeners;

/* host: the address to bind (each sandbox gets an ephemeral port on it).
 * host is copied; the rest must outlive the result. */
struct envd_listeners *envd_listeners_new(struct envd_ctx *envd, struct http_conns *conns, const char *host);
/* Hooks that open a sandbox's listener when it is created and close it
 * (with its connections) when it is removed. Add them to the registry
 * first, so its streams go before its processes. */
void envd_listeners_hooks(struct envd_listeners *l, struct registry_hooks *out);
/* Closes every sandbox's listener and its connections; before the
 * connection tracker goes. */
void envd_listeners_close_all(struct envd_listeners *l);
/* After the registry (whose removing hooks still call in). */
void envd_listeners_free(struct envd_listeners *l);

#endif
