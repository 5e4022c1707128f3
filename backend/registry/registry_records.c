/* Sandbox records (registry_records.h). */
#include "registry/registry_records.h"

#include "lib/hmac.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "store/store_layers.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_VERSION 1

static int derive(const char *key, const char *kind, const struct sandbox *sb, char *out)
{
	char message[128];
	snprintf(message, sizeof message, "%s:%s:%s", kind, sb->id, sb->token_nonce);
	return hmac_sha256_hex(key, message, out);
}

int registry_records_tokens(struct sandbox *sb, const char *key, bool secure, bool private_traffic)
{
	sb->access_token[0] = sb->traffic_token[0] = '\0';
	if (secure && derive(key, "envd", sb, sb->access_token) != 0)
		return -1;
	if (private_traffic && derive(key, "traffic", sb, sb->traffic_token) != 0)
		return -1;
	return 0;
}

const char *registry_records_layer_id(const char *root)
{
	for (size_t i = 0; i < store_layers_count(); i++) {
		const struct store_layer *l = store_layers_at(i);
		if (l && strcmp(l->root, root) == 0)
			return l->id;
	}
	return NULL;
}

static cJSON *layers_of(const struct sandbox *sb)
{
	cJSON *ids = cJSON_CreateArray();
	for (size_t i = 0; ids && i < sb->layer_count; i++) {
		const char *id = registry_records_layer_id(sb->layers[i]);
		if (!id || !cJSON_AddItemToArray(ids, cJSON_CreateString(id))) {
			cJSON_Delete(ids);
			return NULL;
		}
	}
	return ids;
}

/* sb->layers from a record's layer ids: their roots in the store. */
static int load_layers(struct sandbox *sb, const cJSON *ids)
{
	if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) == 0)
		return 0;
	size_t n = (size_t)cJSON_GetArraySize(ids);
	sb->layers = calloc(n, sizeof *sb->layers);
	if (!sb->layers)
		return -1;
	const cJSON *id;
	cJSON_ArrayForEach(id, ids) {
		const struct store_layer *l =
			store_layer_find(cJSON_GetStringValue(id) ? id->valuestring : "");
		if (!l || !(sb->layers[sb->layer_count] = strdup(l->root)))
			return -1;
		sb->layer_count++;
	}
	return 0;
}

static bool add_copy(cJSON *o, const char *name, const cJSON *value)
{
	cJSON *dup = value ? cJSON_Duplicate(value, 1) : cJSON_CreateNull();
	return dup && cJSON_AddItemToObject(o, name, dup);
}

cJSON *registry_records_of(const struct sandbox *sb, int64_t now_ms)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	bool ok = cJSON_AddNumberToObject(o, "version", RECORD_VERSION) &&
		cJSON_AddStringToObject(o, "sandboxID", sb->id) &&
		cJSON_AddStringToObject(o, "clientID", sb->client_id) &&
		cJSON_AddStringToObject(o, "templateID", sb->template_id) &&
		add_copy(o, "metadata", sb->metadata) && add_copy(o, "envVars", sb->env_vars) &&
		add_copy(o, "volumeMounts", sb->volume_mounts) && add_copy(o, "network", sb->asked_network) &&
		cJSON_AddItemToObject(o, "layers", layers_of(sb)) &&
		cJSON_AddBoolToObject(o, "secure", sb->secure) &&
		cJSON_AddBoolToObject(o, "privateTraffic", sb->traffic_token[0] != '\0') &&
		cJSON_AddStringToObject(o, "tokenNonce", sb->token_nonce) &&
		cJSON_AddBoolToObject(o, "autoPause", sb->auto_pause) &&
		cJSON_AddBoolToObject(o, "autoPauseMemory", sb->auto_pause_memory) &&
		cJSON_AddNumberToObject(o, "pauseKind", sb->pause_kind) &&
		cJSON_AddStringToObject(o, "pauseReason", sb->pause_why) &&
		cJSON_AddBoolToObject(o, "autoResume", sb->auto_resume) &&
		cJSON_AddNumberToObject(o, "timeoutS", (double)sb->timeout_s) &&
		cJSON_AddNumberToObject(o, "allowInternetAccess", sb->allow_internet_access) &&
		cJSON_AddStringToObject(o, "state", sb->state == SANDBOX_RUNNING ? "running" : "paused") &&
		cJSON_AddNumberToObject(o, "startedAt", (double)sb->started_at_ms) &&
		cJSON_AddNumberToObject(o, "endAt", (double)sb->end_at_ms) &&
		cJSON_AddNumberToObject(o, "lifetimeLeftMs", (double)sb->left_at_pause_ms) &&
		cJSON_AddNumberToObject(o, "recordedAt", (double)now_ms) &&
		cJSON_AddNumberToObject(o, "cpuCount", sb->cpu_count) &&
		cJSON_AddNumberToObject(o, "memoryMB", sb->memory_mb) &&
		cJSON_AddNumberToObject(o, "diskSizeMB", sb->disk_size_mb) &&
		cJSON_AddNumberToObject(o, "idBase", (double)runtime_sandbox_id_base(sb));
	if (ok && sb->mask_request_host)
		ok = cJSON_AddStringToObject(o, "maskRequestHost", sb->mask_request_host) != NULL;
	cJSON *https = ok && sb->n_https_ports ? cJSON_AddArrayToObject(o, "httpsPorts") : NULL;
	for (size_t i = 0; https && i < sb->n_https_ports; i++)
		cJSON_AddItemToArray(https, cJSON_CreateNumber(sb->https_ports[i]));
	if (ok && sb->default_user)
		ok = cJSON_AddStringToObject(o, "defaultUser", sb->default_user) != NULL;
	if (ok && sb->default_workdir)
		ok = cJSON_AddStringToObject(o, "defaultWorkdir", sb->default_workdir) != NULL;
	if (ok && sb->template_ref)
		ok = cJSON_AddStringToObject(o, "templateRef", sb->template_ref) != NULL;
	if (ok && sb->template_alias)
		ok = cJSON_AddStringToObject(o, "templateAlias", sb->template_alias) != NULL;
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static const char *str(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static bool num(const cJSON *o, const char *name, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!cJSON_IsNumber(v))
		return false;
	*out = v->valuedouble;
	return true;
}

static cJSON *copy_of(const cJSON *o, const char *name, bool array)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	if (array ? !cJSON_IsArray(v) : !cJSON_IsObject(v))
		return array ? cJSON_CreateArray() : cJSON_CreateObject();
	return cJSON_Duplicate(v, 1);
}

int registry_records_load(struct sandbox *sb, const cJSON *r, const char *key, uint32_t *id_base)
{
	const char *id = str(r, "sandboxID"), *client = str(r, "clientID"), *tpl = str(r, "templateID");
	const char *nonce = str(r, "tokenNonce"), *state = str(r, "state");
	double started, end_at, left, recorded, cpu, mem, disk, base, internet;
	if (!id || strlen(id) != SANDBOX_ID_LEN || !client || strlen(client) > SANDBOX_CLIENT_ID_LEN ||
		!tpl || !nonce || strlen(nonce) >= sizeof sb->token_nonce || !state ||
		!num(r, "startedAt", &started) || !num(r, "endAt", &end_at) ||
		!num(r, "lifetimeLeftMs", &left) || !num(r, "recordedAt", &recorded) ||
		!num(r, "cpuCount", &cpu) || !num(r, "memoryMB", &mem) || !num(r, "diskSizeMB", &disk) ||
		!num(r, "idBase", &base) || !num(r, "allowInternetAccess", &internet))
		return -1;
	strcpy(sb->id, id);
	strcpy(sb->client_id, client);
	strcpy(sb->token_nonce, nonce);
	sb->template_id = strdup(tpl);
	sb->metadata = copy_of(r, "metadata", false);
	sb->env_vars = copy_of(r, "envVars", false);
	sb->volume_mounts = copy_of(r, "volumeMounts", true);
	const cJSON *net = cJSON_GetObjectItemCaseSensitive(r, "network");
	if (!net) /* records of earlier versions: the network as asked at create */
		net = cJSON_GetObjectItemCaseSensitive(r, "createNetwork");
	sb->asked_network = cJSON_IsObject(net) ? cJSON_Duplicate(net, 1) : NULL;
	const char *mask = str(r, "maskRequestHost");
	sb->mask_request_host = mask ? strdup(mask) : NULL;
	const cJSON *port;
	cJSON_ArrayForEach(port, cJSON_GetObjectItemCaseSensitive(r, "httpsPorts")) {
		if (cJSON_IsNumber(port) && port->valuedouble >= 1 && port->valuedouble <= 65535 &&
			sb->n_https_ports < SANDBOX_HTTPS_PORTS_MAX)
			sb->https_ports[sb->n_https_ports++] = (uint16_t)port->valuedouble;
	}
	/* Records of earlier versions have neither: "user" and its home. */
	const char *user = str(r, "defaultUser"), *workdir = str(r, "defaultWorkdir");
	sb->default_user = user ? strdup(user) : NULL;
	sb->default_workdir = workdir ? strdup(workdir) : NULL;
	/* Records of earlier versions have neither: reported as template_id. */
	const char *ref = str(r, "templateRef"), *alias = str(r, "templateAlias");
	sb->template_ref = ref ? strdup(ref) : NULL;
	sb->template_alias = alias ? strdup(alias) : NULL;
	if (!sb->template_id || !sb->metadata || !sb->env_vars || !sb->volume_mounts ||
		(mask && !sb->mask_request_host) || (user && !sb->default_user) ||
		(workdir && !sb->default_workdir) || (ref && !sb->template_ref) ||
		(alias && !sb->template_alias) ||
		load_layers(sb, cJSON_GetObjectItemCaseSensitive(r, "layers")) != 0)
		return -1;
	sb->secure = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "secure"));
	sb->auto_pause = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "autoPause"));
	sb->auto_resume = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "autoResume"));
	/* Records of earlier versions have none: E2B's default, memory kept;
	 * their pauses left no image. */
	sb->auto_pause_memory = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r, "autoPauseMemory"));
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(r, "pauseKind");
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(r, "pauseReason");
	if (cJSON_IsNumber(kind) && kind->valueint > SANDBOX_PAUSE_NONE &&
		kind->valueint <= SANDBOX_PAUSE_FILES)
		sb->pause_kind = (enum sandbox_pause_kind)kind->valueint;
	if (cJSON_IsString(why))
		snprintf(sb->pause_why, sizeof sb->pause_why, "%s", why->valuestring);
	/* Records of earlier versions have none: E2B's default. */
	const cJSON *timeout = cJSON_GetObjectItemCaseSensitive(r, "timeoutS");
	sb->timeout_s = cJSON_IsNumber(timeout) && timeout->valuedouble >= 0 && timeout->valuedouble < 1e9
		? (int64_t)timeout->valuedouble
		: 300;
	sb->allow_internet_access = (int)internet;
	bool private_traffic = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "privateTraffic"));
	if (registry_records_tokens(sb, key, sb->secure, private_traffic) != 0)
		return -1;
	sb->cpu_count = (int)cpu;
	sb->memory_mb = (int)mem;
	sb->disk_size_mb = (int)disk;
	*id_base = (uint32_t)base;
	/* Paused: a running one died with its backend and resumes with what it
	 * had left when its record was last written. */
	sb->state = SANDBOX_PAUSED;
	sb->started_at_ms = (int64_t)started;
	if (strcmp(state, "paused") == 0) {
		sb->end_at_ms = (int64_t)end_at;
		sb->left_at_pause_ms = (int64_t)left;
	} else {
		sb->end_at_ms = (int64_t)recorded;
		sb->left_at_pause_ms = end_at > recorded ? (int64_t)(end_at - recorded) : 0;
	}
	return 0;
}
