/* Control-plane request handlers (reference §1.1). api_routes.c has matched
 * the route and checked the API key before any of these runs. Each returns
 * the HTTP status it answered with. */
#ifndef E2B_BACKEND_API_HANDLERS_H
#define E2B_BACKEND_API_HANDLERS_H

#include <stdbool.h>
#include <stddef.h>

struct evhttp_request;
struct registry;

struct api_ctx {
	struct registry *reg;
	const char *api_key;
	/* false (default): connect only ever extends a running sandbox, as
	 * e2b-dev/infra's KeepAliveFor(allowShorter=false). true: connect sets
	 * endAt = now + timeout even when that is sooner, the old trap that
	 * clients must not fall into (--connect-may-shorten). */
	bool connect_may_shorten;
	size_t max_sandboxes; /* running + paused; create answers 429 above */
};

/* id is the {sandboxID} path segment, already stripped of a legacy
 * "-<clientID>" suffix; "" for routes without one. */
typedef int (*api_handler)(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

/* api_sandboxes.c */
int api_create_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_create_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_kill(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_set_timeout(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_pause(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_resume(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_connect_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_connect_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

/* api_list.c */
int api_list_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_list_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

/* The 404 every sandbox route gives for an unknown ID (E2B's wording). */
int api_reply_not_found(struct evhttp_request *req, const char *id);

#endif
