/* The network side of the control plane: the create body's
 * allow_internet_access and network object, and updateNetwork
 * (PUT /sandboxes/{id}/network, also POST). */
#ifndef E2B_BACKEND_API_NETWORK_H
#define E2B_BACKEND_API_NETWORK_H

#include "api/api_ctx.h"
#include "http/http_body.h"

struct cJSON;
struct net_policy;
struct sandbox_spec;

/* Reads allow_internet_access and network into spec (ingress: the traffic
 * token, maskRequestHost, which point into body) and policy (egress). -1
 * with a 400 in err; policy then needs no freeing. */
int api_network_read_create(const struct cJSON *body, struct sandbox_spec *spec, struct net_policy *policy,
	struct err *err);
int api_update_network(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

#endif
