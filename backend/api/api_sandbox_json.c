/* Serializing a sandbox as Sandbox, SandboxDetail and ListedSandbox. */
#include "api/api_sandbox_json.h"

#include "api/api_volume_mounts.h"
#include "lib/clock.h"
#include "net/net.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <stdbool.h>

/* Ours, not E2B's: the sandbox's own envd listener (envd_listener.h), a
 * URL that needs no E2b-Sandbox-Id header. */
static void add_envd_url(cJSON *o, const struct sandbox *sb)
{
	if (sb->envd_url[0])
		cJSON_AddStringToObject(o, "envdUrl", sb->envd_url);
}

/* Ours, not E2B's: a paused sandbox's lifetime left, in seconds. E2B
 * reports only endAt, the moment it paused, so a client resuming it cannot
 * give back the time it had; with this it can (docs/backend/running.md, "lifetimeLeft, ours"). */
static void add_lifetime_left(cJSON *o, const struct sandbox *sb)
{
	if (sb->state == SANDBOX_PAUSED)
		cJSON_AddNumberToObject(o, "lifetimeLeft", (double)sb->left_at_pause_ms / 1000.0);
}

/* Ours, not E2B's: how a paused sandbox was paused ("checkpoint": its
 * processes on disk; "freeze": frozen in memory, with why a checkpoint was
 * not made; "files": its processes ended, its files kept). */
static void add_pause(cJSON *o, const struct sandbox *sb)
{
	static const char *const kinds[] = {
		[SANDBOX_PAUSE_CHECKPOINT] = "checkpoint",
		[SANDBOX_PAUSE_FREEZE] = "freeze",
		[SANDBOX_PAUSE_FILES] = "files",
	};
	if (sb->state != SANDBOX_PAUSED || sb->pause_kind == SANDBOX_PAUSE_NONE)
		return;
	cJSON *p = cJSON_AddObjectToObject(o, "pause");
	if (!p)
		return;
	cJSON_AddStringToObject(p, "kind", kinds[sb->pause_kind]);
	if (sb->pause_why[0])
		cJSON_AddStringToObject(p, "reason", sb->pause_why);
}

/* templateID: a built template's id, else the built-in template's name;
 * alias: a built template's name (E2B's). */
static void add_template(cJSON *o, const struct sandbox *sb)
{
	cJSON_AddStringToObject(o, "templateID", sb->template_ref ? sb->template_ref : sb->template_id);
	if (sb->template_alias)
		cJSON_AddStringToObject(o, "alias", sb->template_alias);
}

/* The fields SandboxDetail and ListedSandbox share (all required ones). */
static cJSON *common_fields(const struct sandbox *sb)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	char started[CLOCK_RFC3339_LEN], ended[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(sb->started_at_ms, started);
	clock_format_rfc3339(sb->end_at_ms, ended);
	add_template(o, sb);
	cJSON_AddStringToObject(o, "sandboxID", sb->id);
	cJSON_AddStringToObject(o, "clientID", sb->client_id);
	cJSON_AddStringToObject(o, "startedAt", started);
	cJSON_AddStringToObject(o, "endAt", ended);
	/* The sandbox's cgroup limits (runtime/runtime.h). */
	cJSON_AddNumberToObject(o, "cpuCount", sb->cpu_count);
	cJSON_AddNumberToObject(o, "memoryMB", sb->memory_mb);
	cJSON_AddNumberToObject(o, "diskSizeMB", sb->disk_size_mb);
	cJSON_AddStringToObject(o, "state", sb->state == SANDBOX_RUNNING ? "running" : "paused");
	cJSON_AddStringToObject(o, "envdVersion", SANDBOX_ENVD_VERSION);
	cJSON_AddItemToObject(o, "metadata", cJSON_Duplicate(sb->metadata, 1));
	cJSON_AddItemToObject(o, "volumeMounts", api_volume_mounts_json(sb->volume_mounts));
	add_envd_url(o, sb);
	add_lifetime_left(o, sb);
	return o;
}

/* E2B's `domain`: the SDK's getHost(port) is "<port>-<id>.<domain>". */
static void add_domain(cJSON *o, const char *domain)
{
	if (domain && *domain)
		cJSON_AddStringToObject(o, "domain", domain);
	else
		cJSON_AddNullToObject(o, "domain");
}

/* SandboxDetail's network: the egress lists as last set, and ingress. */
static void add_network(cJSON *o, const struct sandbox *sb)
{
	cJSON *network = cJSON_CreateObject();
	if (!network)
		return;
	net_sandbox_to_json(sb, network);
	if (sb->traffic_token[0])
		cJSON_AddBoolToObject(network, "allowPublicTraffic", false);
	if (sb->mask_request_host)
		cJSON_AddStringToObject(network, "maskRequestHost", sb->mask_request_host);
	cJSON *https = sb->n_https_ports ? cJSON_AddArrayToObject(network, "httpsPorts") : NULL;
	for (size_t i = 0; https && i < sb->n_https_ports; i++)
		cJSON_AddItemToArray(https, cJSON_CreateNumber(sb->https_ports[i]));
	if (network->child)
		cJSON_AddItemToObject(o, "network", network);
	else
		cJSON_Delete(network);
}

cJSON *sandbox_json_created(const struct sandbox *sb, const char *domain)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add_template(o, sb);
	cJSON_AddStringToObject(o, "sandboxID", sb->id);
	cJSON_AddStringToObject(o, "clientID", sb->client_id);
	cJSON_AddStringToObject(o, "envdVersion", SANDBOX_ENVD_VERSION);
	if (sb->secure)
		cJSON_AddStringToObject(o, "envdAccessToken", sb->access_token);
	add_domain(o, domain);
	if (sb->traffic_token[0])
		cJSON_AddStringToObject(o, "trafficAccessToken", sb->traffic_token);
	else
		cJSON_AddNullToObject(o, "trafficAccessToken");
	add_envd_url(o, sb);
	return o;
}

cJSON *sandbox_json_detail(const struct sandbox *sb, const char *domain)
{
	cJSON *o = common_fields(sb);
	if (!o)
		return NULL;
	if (sb->secure)
		cJSON_AddStringToObject(o, "envdAccessToken", sb->access_token);
	add_domain(o, domain);
	if (sb->allow_internet_access >= 0)
		cJSON_AddBoolToObject(o, "allowInternetAccess", sb->allow_internet_access);
	add_network(o, sb);
	add_pause(o, sb);
	cJSON *lifecycle = cJSON_AddObjectToObject(o, "lifecycle");
	if (lifecycle) {
		cJSON_AddBoolToObject(lifecycle, "autoResume", sb->auto_resume);
		cJSON_AddStringToObject(lifecycle, "onTimeout", sb->auto_pause ? "pause" : "kill");
	}
	return o;
}

cJSON *sandbox_json_listed(const struct sandbox *sb)
{
	return common_fields(sb);
}
