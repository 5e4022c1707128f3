/* What every control-plane handler gets: the context main.c set up and the
 * handler's signature. api_routes.c has matched the route and checked the
 * API key before a handler runs; each returns the HTTP status it answered
 * with. */
#ifndef E2B_BACKEND_API_CTX_H
#define E2B_BACKEND_API_CTX_H

#include <stdbool.h>
#include <stddef.h>

struct evhttp_request;
struct registry;
struct templates_env;
struct secrets;
struct snapshots;
struct volumes;

struct api_ctx {
	struct registry *reg;
	const char *api_key;
	/* false (default): connect only ever extends a running sandbox, as
	 * e2b-dev/infra's KeepAliveFor(allowShorter=false). true: connect sets
	 * endAt = now + timeout even when that is sooner, the old trap that
	 * clients must not fall into (--connect-may-shorten). */
	bool connect_may_shorten;
	size_t max_sandboxes;            /* running + paused; create answers 429 above */
	const char *domain;              /* --domain: the sandboxes' `domain` (<port>-<id>.<domain>) */
	struct templates_env *templates; /* the template catalog and its builds */
	struct volumes *volumes;         /* volumes/ (api_volumes.h) */
	struct snapshots *snapshots;     /* snapshots/ (api_snapshots.h) */
	struct secrets *secrets;         /* secrets/ (api_secrets.h) */
	struct warm *warm;               /* warm/: sandboxes started ahead, or NULL */
};

/* id is the {sandboxID} path segment, already stripped of a legacy
 * "-<clientID>" suffix; "" for routes without one. */
/* What a handler returns when it answers later (and logs the request then). */
#define API_STATUS_PENDING 0
typedef int (*api_handler)(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
