/* Network settings on create and updateNetwork (api_network.h). */
#include "api/api_network.h"

#include "http/http_field.h"
#include "http/http_reply.h"
#include "lib/err.h"
#include "net/net.h"
#include "net/net_egress.h"
#include "net/net_policy.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <event2/http.h>
#include <stdio.h>
#include <string.h>

/* network.httpsPorts: ports 1-65535 (repeats kept once). */
static int read_https_ports(const cJSON *network, struct sandbox_spec *spec, struct err *err)
{
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(network, "httpsPorts");
	if (!ports || cJSON_IsNull(ports))
		return 0;
	const cJSON *port;
	bool ok = cJSON_IsArray(ports);
	cJSON_ArrayForEach(port, ports) {
		/* the range first: casting a double beyond long's is undefined */
		if (!ok || !cJSON_IsNumber(port) || !(port->valuedouble >= 1 && port->valuedouble <= 65535) ||
			port->valuedouble != (double)(long)port->valuedouble) {
			ok = false;
			break;
		}
		uint16_t p = (uint16_t)port->valuedouble;
		bool seen = false;
		for (size_t i = 0; i < spec->n_https_ports; i++)
			seen = seen || spec->https_ports[i] == p;
		if (seen)
			continue;
		if (spec->n_https_ports == SANDBOX_HTTPS_PORTS_MAX) {
			body_error_set(err, "field \"network.httpsPorts\" may have at most %d ports",
				SANDBOX_HTTPS_PORTS_MAX);
			return -1;
		}
		spec->https_ports[spec->n_https_ports++] = p;
	}
	if (!ok) {
		body_error_set(err, "field \"network.httpsPorts\" must be an array of ports (1-65535)");
		return -1;
	}
	return 0;
}

/* A Host value: printable ASCII without spaces (it is written into a
 * request header), as E2B wants an ASCII host[:port]. */
static bool host_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == ',' || s[i] == '/')
			return false;
	return true;
}

/* allowOut/denyOut of obj plus allow_internet_access into policy. */
static int read_policy(const cJSON *lists, int allow_internet_access, struct net_policy *policy,
	struct err *err)
{
	const cJSON *allow = lists ? cJSON_GetObjectItemCaseSensitive(lists, "allowOut") : NULL;
	const cJSON *deny = lists ? cJSON_GetObjectItemCaseSensitive(lists, "denyOut") : NULL;
	if (net_policy_parse(cJSON_IsNull(allow) ? NULL : allow, cJSON_IsNull(deny) ? NULL : deny,
		    allow_internet_access, policy, err) != 0) {
		err->status = 400;
		return -1;
	}
	if (!net_enabled() && !net_policy_is_open(policy)) {
		net_policy_free(policy);
		body_error_set(err,
			"egress rules need isolated sandboxes (this backend runs with "
			"--isolation none)");
		return -1;
	}
	const cJSON *rules = lists ? cJSON_GetObjectItemCaseSensitive(lists, "rules") : NULL;
	if (net_rules_parse(rules, &policy->rules, err) != 0) {
		net_policy_free(policy);
		err->status = 400;
		return -1;
	}
	const cJSON *tunnel = lists ? cJSON_GetObjectItemCaseSensitive(lists, "egressProxy") : NULL;
	if (net_tunnel_parse(tunnel, &policy->tunnel, err) != 0) {
		net_policy_free(policy);
		err->status = 400;
		return -1;
	}
	if ((policy->rules.n || policy->tunnel.set) && !net_egress_available()) {
		net_policy_free(policy);
		body_error_set(err,
			"network rules and egressProxy need sandbox networking and the egress proxy, "
			"which this backend does not run (--isolation none or rootless, or "
			"--sandbox-network off)");
		return -1;
	}
	return 0;
}

static int read_allow_internet(const cJSON *body, int *out, struct err *err)
{
	bool flag;
	enum field_result r = field_bool(body, "allow_internet_access", &flag, err);
	*out = r == FIELD_OK ? flag : -1;
	return r == FIELD_BAD ? -1 : 0;
}

int api_network_read_create(const cJSON *body, struct sandbox_spec *spec, struct net_policy *policy,
	struct err *err)
{
	if (read_allow_internet(body, &spec->allow_internet_access, err) != 0)
		return -1;
	const cJSON *network = cJSON_GetObjectItemCaseSensitive(body, "network");
	if (cJSON_IsNull(network))
		network = NULL;
	if (network && !cJSON_IsObject(network)) {
		body_error_set(err, "field \"network\" must be an object");
		return -1;
	}
	if (network) {
		bool public_traffic = true;
		if (field_bool(network, "allowPublicTraffic", &public_traffic, err) == FIELD_BAD ||
			field_string(network, "maskRequestHost", &spec->mask_request_host, err) ==
				FIELD_BAD ||
			read_https_ports(network, spec, err) != 0)
			return -1;
		spec->private_traffic = !public_traffic;
		if (spec->mask_request_host && !host_ok(spec->mask_request_host)) {
			body_error_set(err, "mask request host is not valid: %.64s", spec->mask_request_host);
			return -1;
		}
	}
	return read_policy(network, spec->allow_internet_access, policy, err);
}

/* sb's network as asked at create with an update's egress rules in place
 * of its own (a field the update leaves out is cleared, as E2B does);
 * ingress (allowPublicTraffic, maskRequestHost) stays as created. */
static cJSON *asked_after_update(const struct sandbox *sb, const cJSON *update)
{
	cJSON *asked = sb->asked_network ? cJSON_Duplicate(sb->asked_network, 1) : cJSON_CreateObject();
	cJSON *network = cJSON_GetObjectItemCaseSensitive(asked, "network");
	if (!asked || (!cJSON_IsObject(network) && !(network = cJSON_AddObjectToObject(asked, "network")))) {
		cJSON_Delete(asked);
		return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(asked, "allow_internet_access");
	const cJSON *internet = cJSON_GetObjectItemCaseSensitive(update, "allow_internet_access");
	if (cJSON_IsBool(internet))
		cJSON_AddItemToObject(asked, "allow_internet_access", cJSON_Duplicate(internet, 0));
	const char *const lists[] = {"allowOut", "denyOut", "rules", "egressProxy"};
	for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
		cJSON_DeleteItemFromObjectCaseSensitive(network, lists[i]);
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(update, lists[i]);
		if (cJSON_IsArray(list) || cJSON_IsObject(list))
			cJSON_AddItemToObject(network, lists[i], cJSON_Duplicate(list, 1));
	}
	return asked;
}

int api_update_network(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	int allow_internet;
	struct net_policy policy;
	if (read_allow_internet(body, &allow_internet, &err) != 0 ||
		read_policy(body, allow_internet, &policy, &err) != 0) {
		cJSON_Delete(body);
		return reply_error(req, err.status, err.msg);
	}
	struct sandbox *sb = registry_find(ctx->reg, id);
	cJSON *asked = sb && sb->state == SANDBOX_RUNNING ? asked_after_update(sb, body) : NULL;
	cJSON_Delete(body);
	int status = !sb
		? reply_errorf(req, 404, "Sandbox \"%s\" doesn't exist or you don't have access to it", id)
		: sb->state != SANDBOX_RUNNING ? reply_errorf(req, 409, "Sandbox \"%s\" is paused", id)
		: !asked                       ? reply_error(req, 500, "out of memory")
					       : 0;
	if (status) {
		net_policy_free(&policy);
		return status;
	}
	struct err why;
	if (net_sandbox_update(sb, &policy, &why) != 0) {
		fprintf(stderr, "sandbox %s: %.255s\n", sb->id, why.msg);
		cJSON_Delete(asked);
		return reply_error(req, 500, "Failed to update the sandbox's network");
	}
	sb->allow_internet_access = allow_internet; /* left out: cleared, as every field */
	registry_set_network(ctx->reg, sb, asked);  /* a restart and forks set it up so too */
	return reply_empty(req, 204);
}
