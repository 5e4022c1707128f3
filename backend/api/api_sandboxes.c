/* Control-plane handlers for one sandbox: create, get, kill, timeout, pause,
 * resume and connect. */
#include "api/api_sandboxes.h"

#include "api/api_network.h"
#include "api/api_sandbox_json.h"
#include "api/api_volume_mounts.h"
#include "http/http_field.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/clock.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "templates/templates.h"
#include "templates/templates_exec.h"
#include "templates/templates_stack.h"
#include "templates/templates_start.h"
#include "warm/warm.h"
#include "http/http_conns.h"
#include "runtime/runtime_overlay.h"
#include "snapshots/snapshots.h"
#include "store/store_layers.h"

#include <cJSON.h>
#include <event2/http.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The 404 every sandbox route gives for an unknown ID (E2B's wording). */
static int reply_not_found(struct evhttp_request *req, const char *id)
{
	return reply_errorf(req, 404, "Sandbox \"%s\" doesn't exist or you don't have access to it", id);
}

/* Default lifetimes in seconds, per route (docs/e2b-protocol-notes.md, "Control plane"). */
#define TIMEOUT_DEFAULT_V1 15
#define TIMEOUT_DEFAULT_V2 300
#define TIMEOUT_DEFAULT_RESUME 15
#define TIMEOUT_DEFAULT_CONNECT 300
#define TEMPLATE_ID_MAX_BYTES 256

/* Per-sandbox limits, so that no client can grow the backend without bound
 * (a body is at most 1 MiB anyway; these keep what is stored per sandbox
 * small). E2B documents no numbers; these are generous for real use. */
static const struct map_limits metadata_limits = {
	.max_keys = 64, .max_key_bytes = 256, .max_value_bytes = 1024, .max_total_bytes = 16384};
static const struct map_limits env_vars_limits = {
	.max_keys = 256, .max_key_bytes = 256, .max_value_bytes = 16384, .max_total_bytes = 65536};

static int reply_body_error(struct evhttp_request *req, const struct body_error *err)
{
	return reply_error(req, err->status, err->message);
}

/* "timeout" in seconds: an int32, not negative, at most 24 hours. */
static enum field_result read_timeout(const cJSON *body, int64_t *out, struct body_error *err)
{
	enum field_result r = field_int(body, "timeout", INT32_MIN, INT32_MAX, out, err);
	if (r != FIELD_OK)
		return r;
	if (*out < 0) {
		body_error_set(err, "field \"timeout\" must not be negative");
		return FIELD_BAD;
	}
	if (*out > SANDBOX_MAX_TIMEOUT_S) {
		err->status = 400;
		snprintf(err->message, sizeof err->message, "Timeout cannot be greater than 24 hours");
		return FIELD_BAD;
	}
	return FIELD_OK;
}

/* Fills spec from a NewSandbox (v1) or NewSandboxV2 body; the network
 * settings are api_network.c's, volumeMounts api_volume_mounts.c's. Unknown
 * fields (mcp, ...) are accepted and ignored. */
static int read_new_sandbox(const cJSON *body, bool v2, struct sandbox_spec *spec,
	struct body_error *err)
{
	spec->timeout_s = v2 ? TIMEOUT_DEFAULT_V2 : TIMEOUT_DEFAULT_V1;
	spec->secure = v2; /* v2 is always secure */

	enum field_result r = field_string(body, "templateID", &spec->template_id, err);
	if (r == FIELD_BAD)
		return -1;
	if (r == FIELD_ABSENT || spec->template_id[0] == '\0') {
		body_error_set(err, "field \"templateID\" is required");
		return -1;
	}
	if (strlen(spec->template_id) > TEMPLATE_ID_MAX_BYTES) {
		body_error_set(err, "field \"templateID\" may be at most %d bytes", TEMPLATE_ID_MAX_BYTES);
		return -1;
	}
	bool flag;
	if (read_timeout(body, &spec->timeout_s, err) == FIELD_BAD ||
	    field_string_map(body, "metadata", &metadata_limits, &spec->metadata, err) == FIELD_BAD ||
	    field_string_map(body, "envVars", &env_vars_limits, &spec->env_vars, err) == FIELD_BAD ||
	    field_bool(body, "autoPause", &spec->auto_pause, err) == FIELD_BAD ||
	    field_bool(body, "autoPauseMemory", &flag, err) == FIELD_BAD)
		return -1;
	if (!v2 && field_bool(body, "secure", &spec->secure, err) == FIELD_BAD)
		return -1;
	/* Not in E2B's create API (its templates fix them): an extension so a
	 * test can ask for a small sandbox; the cgroup enforces them. */
	int64_t n;
	spec->cpu_count = SANDBOX_DEFAULT_CPU_COUNT;
	spec->memory_mb = SANDBOX_DEFAULT_MEMORY_MB;
	r = field_int(body, "cpuCount", INT32_MIN, INT32_MAX, &n, err);
	if (r == FIELD_BAD)
		return -1;
	if (r == FIELD_OK)
		spec->cpu_count = (int)n;
	r = field_int(body, "memoryMB", INT32_MIN, INT32_MAX, &n, err);
	if (r == FIELD_BAD)
		return -1;
	if (r == FIELD_OK)
		spec->memory_mb = (int)n;
	/* The size of the sandbox's writable layer (checked by the runtime). */
	spec->disk_size_mb = SANDBOX_DEFAULT_DISK_SIZE_MB;
	r = field_int(body, "diskSizeMB", INT32_MIN, INT32_MAX, &n, err);
	if (r == FIELD_BAD)
		return -1;
	if (r == FIELD_OK)
		spec->disk_size_mb = (int)n;
	return 0;
}

/* spec->template_id names a built template: its ready build's config, the
 * spec pointed at its base, *envs its environment merged with the
 * request's (spec->env_vars points into it), its user and workdir the
 * sandbox's defaults. -1 with missing set (404) or
 * empty (out of memory). Any other name is left to the runtime. */
static int api_template_resolve(struct api_ctx *ctx, struct sandbox_spec *spec,
	const struct template_config **cfg, cJSON **envs, const char ***roots, char *missing, size_t len)
{
	struct template *tpl = templates_find(ctx->templates->catalog, spec->template_id);
	if (!tpl)
		return 0;
	const char *colon = strchr(spec->template_id, ':');
	struct template_build *b = templates_ready_build(tpl, colon ? colon + 1 : NULL);
	if (!b) {
		snprintf(missing, len, "template '%.200s' has no ready build", spec->template_id);
		return -1;
	}
	/* Its stack of layers, started from without a copy. */
	*roots = templates_stack_roots(b->config.layers, &spec->layer_count, missing, len);
	if (!*roots)
		return -1;
	*envs = cJSON_Duplicate(b->config.envs, true);
	const cJSON *e, *given = *envs ? spec->env_vars : NULL;
	cJSON_ArrayForEach(e, given) {
		cJSON_DeleteItemFromObjectCaseSensitive(*envs, e->string);
		cJSON_AddStringToObject(*envs, e->string, e->valuestring);
	}
	if (!*envs) {
		missing[0] = '\0';
		return -1;
	}
	spec->env_vars = *envs;
	spec->layers = *roots;
	spec->template_id = b->config.base;
	spec->default_user = b->config.user;
	spec->default_workdir = b->config.workdir;
	*cfg = &b->config;
	tpl->spawn_count++;
	tpl->last_spawned_ms = clock_now_ms();
	return 0;
}

/* A create waiting for its template's ready command. */
struct ready_wait {
	struct api_ctx *ctx;
	struct evhttp_request *req;
	struct templates_start *start;
	char sb_id[SANDBOX_ID_LEN + 1];
};

static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct ready_wait *w = arg;
	templates_start_abandon(w->start);
	struct sandbox *sb = registry_find(w->ctx->reg, w->sb_id);
	if (sb)
		registry_kill(w->ctx->reg, sb); /* nobody learnt its id */
	http_conn_gone_free_request(w->req);
	free(w);
}

static void on_ready(void *arg, const char *error)
{
	struct ready_wait *w = arg;
	http_conn_set_closecb(evhttp_request_get_connection(w->req), NULL, NULL);
	struct sandbox *sb = registry_find(w->ctx->reg, w->sb_id);
	int status;
	if (error || !sb) {
		if (sb)
			registry_kill(w->ctx->reg, sb);
		status = reply_errorf(w->req, 500, "Failed to create sandbox: %s",
			error ? error : "the sandbox went away");
	} else {
		status = reply_json(w->req, 201, sandbox_json_created(sb, w->ctx->domain));
	}
	request_log("api", w->req, status);
	free(w);
}

static int api_template_wait_ready(struct api_ctx *ctx, struct evhttp_request *req,
	struct sandbox *sb, const struct template_config *cfg)
{
	struct ready_wait *w = calloc(1, sizeof *w);
	if (w) {
		w->ctx = ctx;
		w->req = req;
		snprintf(w->sb_id, sizeof w->sb_id, "%s", sb->id);
		w->start = templates_start_begin(ctx->templates, sb, cfg, on_ready, w);
	}
	if (!w || !w->start) {
		free(w);
		registry_kill(ctx->reg, sb);
		return reply_error(req, 500, "out of memory");
	}
	http_conn_set_closecb(evhttp_request_get_connection(req), on_client_gone, w);
	return 0; /* answered later; logged then */
}

/* {allow_internet_access?, network?} of a create body: kept with the
 * sandbox, to set its network up again after a restart. */
static cJSON *network_asked(const cJSON *body)
{
	cJSON *asked = cJSON_CreateObject();
	const char *const fields[] = {"allow_internet_access", "network"};
	for (size_t i = 0; asked && i < sizeof fields / sizeof fields[0]; i++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(body, fields[i]);
		if (f)
			cJSON_AddItemToObject(asked, fields[i], cJSON_Duplicate(f, 1));
	}
	return asked;
}

/* A new sandbox's interface and rules; a warm one has them already, with
 * open rules, which the request's replace. Takes *policy. */
static int give_network(struct sandbox *sb, bool warm, struct net_policy *policy, char *why,
	size_t why_len)
{
	if (!warm)
		return net_sandbox_attach(sb, policy, why, why_len);
	if (net_policy_is_open(policy)) {
		net_policy_free(policy);
		return 0;
	}
	return net_sandbox_update(sb, policy, why, why_len);
}

static int create(struct api_ctx *ctx, struct evhttp_request *req, bool v2)
{
	struct body_error err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_body_error(req, &err);
	struct sandbox_spec spec = {0};
	struct net_policy policy;
	cJSON *mounts = NULL, *asked_net = NULL;
	struct sandbox *sb = NULL;
	struct runtime_error rerr;
	int status = 0;
	if (read_new_sandbox(body, v2, &spec, &err) != 0 ||
	    api_volume_mounts_read(body, ctx->volumes, &mounts, &err) != 0 ||
	    api_network_read_create(body, &spec, &policy, &err) != 0) {
		cJSON_Delete(body);
		cJSON_Delete(mounts);
		return reply_body_error(req, &err);
	}
	spec.volume_mounts = mounts;
	spec.asked_network = asked_net = network_asked(body);
	/* A snapshot's name or id as templateID: its stack of layers, on the
	 * template it was taken of, with that sandbox's default user and workdir. */
	const char *roots[RUNTIME_MAX_LAYERS];
	const struct snapshot *snap = snapshots_resolve(ctx->snapshots, spec.template_id);
	int layers = snap ? snapshots_roots(snap, roots, RUNTIME_MAX_LAYERS) : 0;
	if (snap) {
		spec.default_user = snap->default_user;
		spec.default_workdir = snap->default_workdir;
	}
	spec.layers = roots;
	spec.layer_count = layers > 0 ? (size_t)layers : 0;
	if (registry_count(ctx->reg) >= ctx->max_sandboxes) {
		/* E2B's answer (and status) when a team is at its concurrency limit. */
		status = reply_errorf(req, 429, "You have reached the maximum number of concurrent E2B "
			"sandboxes (%zu). If you need more, please contact us at "
			"'https://e2b.dev/docs/getting-help'", ctx->max_sandboxes);
	} else if (layers < 0) {
		status = reply_errorf(req, 500, "snapshot '%.140s' has lost its layers", spec.template_id);
	}
	/* A built template: its stack, its environment (the request's envVars
	 * win) and its start and ready commands. */
	const struct template_config *cfg = NULL;
	cJSON *envs = NULL;
	const char **tpl_roots = NULL; /* the layers' paths: the registry copies them */
	char missing[300] = "";
	if (!status && !snap &&
	    api_template_resolve(ctx, &spec, &cfg, &envs, &tpl_roots, missing, sizeof missing) != 0)
		status = reply_error(req, missing[0] ? 404 : 500, missing[0] ? missing : "out of memory");
	/* The default shape: one started ahead, if one is ready. */
	struct sandbox *warm = !status && !snap && !cfg ? warm_take(ctx->warm, &spec) : NULL;
	if (warm && registry_claim(ctx->reg, warm, &spec, &rerr) != 0) {
		registry_discard(ctx->reg, warm);
		status = reply_error(req, rerr.status, rerr.message);
	} else if (warm) {
		sb = warm;
	} else if (!status && (runtime_check_create(snap ? snap->template_id : spec.template_id,
				 spec.cpu_count, spec.memory_mb, spec.disk_size_mb, &rerr) != 0 ||
			       !(sb = registry_create(ctx->reg, &spec, &rerr)))) {
		status = reply_error(req, rerr.status, rerr.message);
	}
	cJSON_Delete(body); /* spec pointed into it; the registry made copies */
	cJSON_Delete(mounts);
	cJSON_Delete(asked_net);
	cJSON_Delete(envs);
	free(tpl_roots);
	if (status) {
		net_policy_free(&policy);
		return status;
	}
	char why[256];
	if (give_network(sb, warm != NULL, &policy, why, sizeof why) != 0) {
		fprintf(stderr, "sandbox %s: %s\n", sb->id, why);
		registry_kill(ctx->reg, sb);
		return reply_error(req, 500, "Failed to create sandbox: no network");
	}
	if (cfg && cfg->start_cmd)
		return api_template_wait_ready(ctx, req, sb, cfg);
	return reply_json(req, 201, sandbox_json_created(sb, ctx->domain));
}

struct sandbox *api_sandboxes_fork(struct api_ctx *ctx, const struct sandbox *orig,
	const char *const *layer_ids, size_t layer_count, int64_t timeout_s, struct runtime_error *err)
{
	const char *roots[RUNTIME_MAX_LAYERS];
	err->status = 500;
	snprintf(err->message, sizeof err->message, "Failed to create sandbox: its layers are missing");
	if (layer_count > RUNTIME_MAX_LAYERS)
		return NULL;
	for (size_t i = 0; i < layer_count; i++) {
		const struct store_layer *l = store_layer_find(layer_ids[i]);
		if (!l)
			return NULL;
		roots[i] = l->root;
	}
	if (registry_count(ctx->reg) >= ctx->max_sandboxes) {
		err->status = 429;
		snprintf(err->message, sizeof err->message, "You have reached the maximum number of "
			"concurrent E2B sandboxes (%zu)", ctx->max_sandboxes);
		return NULL;
	}
	struct sandbox_spec spec = {.template_id = orig->template_id, .layers = roots,
		.layer_count = layer_count, .timeout_s = timeout_s, .metadata = orig->metadata,
		.env_vars = orig->env_vars, .volume_mounts = orig->volume_mounts,
		.asked_network = orig->asked_network, .default_user = orig->default_user,
		.default_workdir = orig->default_workdir, .secure = orig->secure,
		.allow_internet_access = orig->allow_internet_access, .cpu_count = orig->cpu_count,
		.memory_mb = orig->memory_mb, .disk_size_mb = orig->disk_size_mb};
	struct net_policy policy;
	struct body_error berr;
	cJSON *empty = orig->asked_network ? NULL : cJSON_CreateObject();
	int rc = api_network_read_create(orig->asked_network ? orig->asked_network : empty, &spec,
		&policy, &berr);
	struct sandbox *sb = rc == 0 ? registry_create(ctx->reg, &spec, err) : NULL;
	cJSON_Delete(empty);
	if (!sb) {
		if (rc == 0)
			net_policy_free(&policy);
		return NULL;
	}
	char why[256];
	if (net_sandbox_attach(sb, &policy, why, sizeof why) != 0) {
		fprintf(stderr, "sandbox %s: %s\n", sb->id, why);
		registry_kill(ctx->reg, sb);
		snprintf(err->message, sizeof err->message, "Failed to create sandbox: no network");
		return NULL;
	}
	return sb;
}

int api_create_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	return create(ctx, req, false);
}

int api_create_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	(void)id;
	return create(ctx, req, true);
}

int api_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	return reply_json(req, 200, sandbox_json_detail(sb, ctx->domain));
}

int api_kill(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	registry_kill(ctx->reg, sb);
	return reply_empty(req, 204);
}

int api_set_timeout(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct body_error err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t timeout = 0;
	enum field_result r = read_timeout(body, &timeout, &err);
	cJSON_Delete(body);
	if (r == FIELD_ABSENT)
		body_error_set(&err, "field \"timeout\" is required");
	if (r != FIELD_OK)
		return reply_body_error(req, &err);

	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	/* E2B keeps only running sandboxes in the store this route updates. */
	if (sb->state != SANDBOX_RUNNING)
		return reply_errorf(req, 404, "Sandbox \"%s\" is not running", id);
	registry_set_timeout(ctx->reg, sb, timeout);
	return reply_empty(req, 204);
}

int api_pause(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct body_error err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_body_error(req, &err);
	bool memory;
	enum field_result r = field_bool(body, "memory", &memory, &err);
	cJSON_Delete(body);
	if (r == FIELD_BAD)
		return reply_body_error(req, &err);

	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	if (sb->state == SANDBOX_PAUSED)
		return reply_errorf(req, 409, "Sandbox %s is already paused", id);
	registry_pause(ctx->reg, sb);
	return reply_empty(req, 204);
}

/* The network a sandbox asks for (sb->asked_network: create's, as
 * updateNetwork last changed it), set up for it: after create, and again when a sandbox kept from an earlier run
 * starts. 0, or -1 (logged). */
static int attach_network(struct sandbox *sb, const cJSON *asked)
{
	struct sandbox_spec spec = {0};
	struct net_policy policy;
	struct body_error err;
	cJSON *empty = asked ? NULL : cJSON_CreateObject();
	char why[256];
	int rc = api_network_read_create(asked ? asked : empty, &spec, &policy, &err);
	cJSON_Delete(empty);
	if (rc != 0) {
		fprintf(stderr, "sandbox %s: its network: %s\n", sb->id, err.message);
		return -1;
	}
	if (net_sandbox_attach(sb, &policy, why, sizeof why) != 0) {
		fprintf(stderr, "sandbox %s: %s\n", sb->id, why);
		return -1;
	}
	return 0;
}

/* paused -> running (resume, connect): 201 Sandbox. */
static int resume_sandbox(struct api_ctx *ctx, struct evhttp_request *req, struct sandbox *sb,
	int64_t timeout)
{
	bool cold = runtime_sandbox_cold(sb);
	struct runtime_error rerr;
	if (registry_resume(ctx->reg, sb, timeout, &rerr) != 0)
		return reply_errorf(req, rerr.status, "Failed to resume sandbox: %s", rerr.message);
	if (cold && attach_network(sb, sb->asked_network) != 0) {
		registry_pause(ctx->reg, sb);
		return reply_error(req, 500, "Failed to resume sandbox: no network");
	}
	return reply_json(req, 201, sandbox_json_created(sb, ctx->domain));
}

int api_resume(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct body_error err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t timeout = TIMEOUT_DEFAULT_RESUME;
	bool auto_pause = false, memory;
	enum field_result auto_pause_given = FIELD_BAD;
	if (read_timeout(body, &timeout, &err) == FIELD_BAD ||
	    (auto_pause_given = field_bool(body, "autoPause", &auto_pause, &err)) == FIELD_BAD ||
	    field_bool(body, "memory", &memory, &err) == FIELD_BAD) {
		cJSON_Delete(body);
		return reply_body_error(req, &err);
	}
	cJSON_Delete(body);

	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	if (sb->state == SANDBOX_RUNNING)
		return reply_errorf(req, 409, "Sandbox %s is already running", id);
	if (auto_pause_given == FIELD_OK)
		sb->auto_pause = auto_pause;
	return resume_sandbox(ctx, req, sb, timeout);
}

/* Both connect routes: 200 when it was running, 201 when it was resumed. */
static int connect_sandbox(struct api_ctx *ctx, struct evhttp_request *req, const char *id,
	bool v2)
{
	struct body_error err;
	cJSON *body = body_parse_object(req, v2 ? BODY_OPTIONAL : BODY_REQUIRED, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t timeout = TIMEOUT_DEFAULT_CONNECT;
	bool memory;
	enum field_result r = read_timeout(body, &timeout, &err);
	if (r == FIELD_ABSENT && !v2) {
		body_error_set(&err, "field \"timeout\" is required");
		r = FIELD_BAD;
	}
	if (r == FIELD_BAD || field_bool(body, "memory", &memory, &err) == FIELD_BAD) {
		cJSON_Delete(body);
		return reply_body_error(req, &err);
	}
	cJSON_Delete(body);

	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	if (sb->state == SANDBOX_PAUSED)
		return resume_sandbox(ctx, req, sb, timeout);
	/* E2B only ever extends here; --connect-may-shorten replaces endAt even
	 * when that brings it closer (a connect without a timeout means 300 s). */
	bool shorter = clock_now_ms() + timeout * 1000 < sb->end_at_ms;
	if (!shorter || ctx->connect_may_shorten)
		registry_set_timeout(ctx->reg, sb, timeout);
	return reply_json(req, 200, sandbox_json_created(sb, ctx->domain));
}

int api_connect_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	return connect_sandbox(ctx, req, id, false);
}

int api_connect_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	return connect_sandbox(ctx, req, id, true);
}
