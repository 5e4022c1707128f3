/* POST /sandboxes and /v2/sandboxes (api_create.h). */
#include "api/api_create.h"

#include "api/api_network.h"
#include "api/api_sandbox_json.h"
#include "api/api_sandboxes.h"
#include "api/api_volume_mounts.h"
#include "http/http_conns.h"
#include "http/http_field.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_overlay.h"
#include "snapshots/snapshots.h"
#include "templates/templates.h"
#include "templates/templates_builtin_cmds.h"
#include "templates/templates_envd_file.h"
#include "templates/templates_exec.h"
#include "templates/templates_stack.h"
#include "templates/templates_start.h"
#include "warm/warm.h"

#include <cJSON.h>
#include <event2/http.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Default lifetimes in seconds (docs/e2b-protocol-notes.md, "Control plane"). */
#define TIMEOUT_DEFAULT_V1 15
#define TIMEOUT_DEFAULT_V2 300
#define TEMPLATE_ID_MAX_BYTES 256

/* Per-sandbox limits, so that no client can grow the backend without bound
 * (a body is at most 1 MiB anyway; these keep what is stored per sandbox
 * small). E2B documents no numbers; these are generous for real use. */
static const struct map_limits metadata_limits = {.max_keys = 64,
	.max_key_bytes = 256,
	.max_value_bytes = 1024,
	.max_total_bytes = 16384};
static const struct map_limits env_vars_limits = {.max_keys = 256,
	.max_key_bytes = 256,
	.max_value_bytes = 16384,
	.max_total_bytes = 65536};

/* lifecycle.autoResume as the SDK sends it: {"enabled": bool}, which needs
 * autoPause (a sandbox that is killed on expiry has nothing to resume). */
static int read_auto_resume(const cJSON *body, struct sandbox_spec *spec, struct err *err)
{
	const cJSON *ar = cJSON_GetObjectItemCaseSensitive(body, "autoResume");
	if (!ar || cJSON_IsNull(ar))
		return 0;
	if (!cJSON_IsObject(ar)) {
		body_error_set(err, "field \"autoResume\" must be an object");
		return -1;
	}
	if (field_bool(ar, "enabled", &spec->auto_resume, err) == FIELD_BAD)
		return -1;
	if (spec->auto_resume && !spec->auto_pause) {
		body_error_set(err, "autoResume can only be enabled when autoPause is true");
		return -1;
	}
	return 0;
}

/* Fills spec from a NewSandbox (v1) or NewSandboxV2 body; the network
 * settings are api_network.c's, volumeMounts api_volume_mounts.c's. Unknown
 * fields (mcp, ...) are accepted and ignored. */
static int read_new_sandbox(const cJSON *body, bool v2, struct sandbox_spec *spec, struct err *err)
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
	bool flag = true; /* autoPauseMemory: E2B's default */
	if (api_sandboxes_read_timeout(body, &spec->timeout_s, err) == FIELD_BAD ||
		field_string_map(body, "metadata", &metadata_limits, &spec->metadata, err) == FIELD_BAD ||
		field_string_map(body, "envVars", &env_vars_limits, &spec->env_vars, err) == FIELD_BAD ||
		field_bool(body, "autoPause", &spec->auto_pause, err) == FIELD_BAD ||
		field_bool(body, "autoPauseMemory", &flag, err) == FIELD_BAD)
		return -1;
	spec->auto_pause_files = !flag;
	if (!v2 && field_bool(body, "secure", &spec->secure, err) == FIELD_BAD)
		return -1;
	if (read_auto_resume(body, spec, err) != 0)
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
 * sandbox's defaults. -1 with err set (404 for a build or layer that is
 * missing, 500 out of memory). Any other name is left to the runtime. */
static int api_template_resolve(struct api_ctx *ctx, struct sandbox_spec *spec,
	const struct template_config **cfg, cJSON **envs, const char ***roots, struct err *err)
{
	struct template *tpl = templates_find(ctx->templates->catalog, spec->template_id);
	if (!tpl)
		return 0;
	const char *colon = strchr(spec->template_id, ':');
	struct template_build *b = templates_ready_build(tpl, colon ? colon + 1 : NULL);
	if (!b) {
		return err_set(err, 404, "template '%.200s' has no ready build", spec->template_id);
	}
	/* Its stack of layers, started from without a copy. */
	*roots = templates_stack_roots(b->config.layers, &spec->layer_count, err);
	if (!*roots) {
		err->status = 404;
		return -1;
	}
	*envs = cJSON_Duplicate(b->config.envs, true);
	const cJSON *e, *given = *envs ? spec->env_vars : NULL;
	cJSON_ArrayForEach(e, given) {
		cJSON_DeleteItemFromObjectCaseSensitive(*envs, e->string);
		cJSON_AddStringToObject(*envs, e->string, e->valuestring);
	}
	if (!*envs)
		return err_set(err, 500, "out of memory");
	spec->env_vars = *envs;
	spec->layers = *roots;
	spec->template_ref = tpl->id;
	spec->template_alias = tpl->name;
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

static void on_ready(void *arg, const struct err *err)
{
	struct ready_wait *w = arg;
	http_conn_set_closecb(evhttp_request_get_connection(w->req), NULL, NULL);
	struct sandbox *sb = registry_find(w->ctx->reg, w->sb_id);
	int status;
	if (err || !sb) {
		if (sb)
			registry_kill(w->ctx->reg, sb);
		status = reply_errorf(w->req, 500, "Failed to create sandbox: %s",
			err ? err->msg : "the sandbox went away");
	} else {
		status = reply_json(w->req, 201, sandbox_json_created(sb, w->ctx->domain));
	}
	request_log("api", w->req, status);
	free(w);
}

static int api_template_wait_ready(struct api_ctx *ctx, struct evhttp_request *req, struct sandbox *sb,
	const struct template_config *cfg)
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
static int give_network(struct sandbox *sb, bool warm, struct net_policy *policy, struct err *err)
{
	if (!warm)
		return net_sandbox_attach(sb, policy, err);
	if (net_policy_is_open(policy)) {
		net_policy_free(policy);
		return 0;
	}
	return net_sandbox_update(sb, policy, err);
}

/* One create, from its body to its answer: what the spec points into. */
struct create {
	struct api_ctx *ctx;
	cJSON *body, *mounts, *asked_net, *envs;
	const char **tpl_roots;                /* a template's layers' paths */
	const char *roots[RUNTIME_MAX_LAYERS]; /* a snapshot's */
	struct sandbox_spec spec;
	struct net_policy policy;
	bool has_policy;
	const struct template_config *cfg; /* a built template's, or a built-in one's with a start command */
	bool builtin_start;                /* cfg is a built-in template's (templates_builtin_cmds.h) */
	const char *base_template;         /* a snapshot's template, else spec.template_id */
	char image[4200];                  /* a snapshot's processes (snapshots_image_of), "" none */
};

static void create_free(struct create *c)
{
	cJSON_Delete(c->body);
	cJSON_Delete(c->mounts);
	cJSON_Delete(c->asked_net);
	cJSON_Delete(c->envs);
	free(c->tpl_roots);
	if (c->has_policy)
		net_policy_free(&c->policy);
	free(c);
}

/* The sandbox (a warm one, or one started now), its network and the
 * answer; the status, or 0 when a template's ready command answers later. */
static int finish(struct create *c, struct evhttp_request *req, struct sandbox *warm)
{
	struct api_ctx *ctx = c->ctx;
	struct err rerr;
	struct sandbox *sb = NULL;
	if (warm && registry_claim(ctx->reg, warm, &c->spec, &rerr) != 0) {
		registry_discard(ctx->reg, warm);
		return reply_error(req, rerr.status, rerr.msg);
	}
	if (warm) {
		sb = warm;
	} else if (runtime_check_create(c->base_template, c->spec.cpu_count, c->spec.memory_mb,
			   c->spec.disk_size_mb, &rerr) != 0 ||
		!(sb = registry_create(ctx->reg, &c->spec, &rerr))) {
		return reply_error(req, rerr.status, rerr.msg);
	}
	struct err why;
	c->has_policy = false;
	if (give_network(sb, warm != NULL, &c->policy, &why) != 0) {
		fprintf(stderr, "sandbox %s: %.255s\n", sb->id, why.msg);
		registry_kill(ctx->reg, sb);
		return reply_error(req, 500, "Failed to create sandbox: no network");
	}
	/* What its start command's servers may ask envd for on E2B (its
	 * environment, whether a request's token is its own). */
	struct err envd_file;
	if (c->cfg && c->cfg->start_cmd && sb->rt && templates_envd_file_write(sb, &envd_file) != 0) {
		fprintf(stderr, "sandbox %s: %.255s\n", sb->id, envd_file.msg);
		registry_kill(ctx->reg, sb);
		return reply_error(req, 500, "Failed to create sandbox: cannot give it its environment");
	}
	/* A snapshot's processes (api_sandboxes_fork_restore, as a fork's). */
	int restored = 0;
	if (c->image[0]) {
		restored = api_sandboxes_fork_restore(ctx, sb, c->image, c->spec.timeout_s, &why);
		if (restored == -2)
			return reply_error(req, why.status, why.msg);
		cJSON *j = sandbox_json_created(sb, ctx->domain),
		      *kind = cJSON_AddObjectToObject(j, "snapshot");
		cJSON_AddStringToObject(kind, "kind", restored == 0 ? "checkpoint" : "files");
		if (restored != 0)
			cJSON_AddStringToObject(kind, "reason", why.msg);
		return reply_json(req, 201, j);
	}
	/* A pooled sandbox of a built-in template runs its start command already. */
	if (c->cfg && c->cfg->start_cmd && !(warm && c->builtin_start))
		return api_template_wait_ready(ctx, req, sb, c->cfg);
	return reply_json(req, 201, sandbox_json_created(sb, ctx->domain));
}

static int create(struct api_ctx *ctx, struct evhttp_request *req, bool v2)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_error(req, err.status, err.msg);
	struct create *c = calloc(1, sizeof *c);
	if (!c) {
		cJSON_Delete(body);
		return reply_error(req, 500, "out of memory");
	}
	c->ctx = ctx;
	c->body = body;
	struct sandbox_spec *spec = &c->spec;
	if (read_new_sandbox(body, v2, spec, &err) != 0 ||
		api_volume_mounts_read(body, ctx->volumes, &c->mounts, &err) != 0 ||
		api_network_read_create(body, spec, &c->policy, &err) != 0) {
		create_free(c);
		return reply_error(req, err.status, err.msg);
	}
	c->has_policy = true;
	spec->volume_mounts = c->mounts;
	spec->asked_network = c->asked_net = network_asked(body);
	/* A snapshot's name or id as templateID: its stack of layers, on the
	 * template it was taken of, with that sandbox's default user and workdir. */
	const struct snapshot *snap = snapshots_resolve(ctx->snapshots, spec->template_id);
	int layers = snap ? snapshots_roots(snap, c->roots, RUNTIME_MAX_LAYERS) : 0;
	if (snap) {
		spec->default_user = snap->default_user;
		spec->default_workdir = snap->default_workdir;
		snapshots_image_of(ctx->snapshots, snap, c->image, sizeof c->image);
	}
	spec->layers = c->roots;
	spec->layer_count = layers > 0 ? (size_t)layers : 0;
	int status = 0;
	if (registry_count(ctx->reg) >= ctx->max_sandboxes) {
		/* E2B's answer (and status) when a team is at its concurrency limit. */
		status = reply_errorf(req, 429,
			"You have reached the maximum number of concurrent E2B "
			"sandboxes (%zu). If you need more, please contact us at "
			"'https://e2b.dev/docs/getting-help'",
			ctx->max_sandboxes);
	} else if (layers < 0) {
		status = reply_errorf(req, 500, "snapshot '%.140s' has lost its layers", spec->template_id);
	}
	/* A built template: its stack, its environment (the request's envVars
	 * win) and its start and ready commands. */
	struct err missing;
	if (!status && !snap &&
		api_template_resolve(ctx, spec, &c->cfg, &c->envs, &c->tpl_roots, &missing) != 0)
		status = reply_error(req, missing.status, missing.msg);
	if (status) {
		create_free(c);
		return status;
	}
	/* A built-in template with a start command (templates_builtin_cmds.h). */
	if (!snap && !c->cfg && runtime_isolated() && (c->cfg = templates_builtin_config(spec->template_id)))
		c->builtin_start = true;
	c->base_template = snap ? snap->template_id : spec->template_id;
	/* One started ahead, if one of this shape is ready (a built template's
	 * sandboxes: unless a start command must run first, which a built-in
	 * template's pool has run). */
	bool poolable = !snap && !(c->cfg && c->cfg->start_cmd && !c->builtin_start);
	status = finish(c, req,
		poolable ? warm_take(ctx->warm, spec, c->builtin_start ? c->cfg : NULL) : NULL);
	create_free(c);
	return status;
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
