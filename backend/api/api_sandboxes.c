/* Control-plane handlers for one sandbox: get, kill, timeout, refresh,
 * pause, resume and connect. */
#include "api/api_sandboxes.h"

#include "api/api_network.h"
#include "api/api_sandbox_json.h"
#include "http/http_field.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "lib/clock.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime_checkpoint.h"
#include "runtime/runtime_overlay.h"
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
#define TIMEOUT_DEFAULT_RESUME 15
#define TIMEOUT_DEFAULT_CONNECT 300
#define AUTO_RESUME_MIN_S 300
#define REFRESH_MIN_S 15   /* and the default: E2B's SandboxTimeoutDefault */
#define REFRESH_MAX_S 3600 /* SandboxRefreshRequest.duration's maximum */

static int reply_body_error(struct evhttp_request *req, const struct err *err)
{
	return reply_error(req, err->status, err->msg);
}

enum field_result api_sandboxes_read_timeout(const cJSON *body, int64_t *out, struct err *err)
{
	enum field_result r = field_int(body, "timeout", INT32_MIN, INT32_MAX, out, err);
	if (r != FIELD_OK)
		return r;
	if (*out < 0) {
		body_error_set(err, "field \"timeout\" must not be negative");
		return FIELD_BAD;
	}
	if (*out > SANDBOX_MAX_TIMEOUT_S) {
		err_set(err, 400, "Timeout cannot be greater than 24 hours");
		return FIELD_BAD;
	}
	return FIELD_OK;
}

struct sandbox *api_sandboxes_fork(struct api_ctx *ctx, const struct sandbox *orig,
	const char *const *layer_ids, size_t layer_count, int64_t timeout_s, struct err *err)
{
	const char *roots[RUNTIME_MAX_LAYERS];
	err_set(err, 500, "Failed to create sandbox: its layers are missing");
	if (layer_count > RUNTIME_MAX_LAYERS)
		return NULL;
	for (size_t i = 0; i < layer_count; i++) {
		const struct store_layer *l = store_layer_find(layer_ids[i]);
		if (!l)
			return NULL;
		roots[i] = l->root;
	}
	if (registry_count(ctx->reg) >= ctx->max_sandboxes) {
		err_set(err, 429,
			"You have reached the maximum number of "
			"concurrent E2B sandboxes (%zu)",
			ctx->max_sandboxes);
		return NULL;
	}
	struct sandbox_spec spec = {.template_id = orig->template_id,
		.template_ref = orig->template_ref,
		.template_alias = orig->template_alias,
		.layers = roots,
		.layer_count = layer_count,
		.timeout_s = timeout_s,
		.metadata = orig->metadata,
		.env_vars = orig->env_vars,
		.volume_mounts = orig->volume_mounts,
		.asked_network = orig->asked_network,
		.default_user = orig->default_user,
		.default_workdir = orig->default_workdir,
		.secure = orig->secure,
		.allow_internet_access = orig->allow_internet_access,
		.cpu_count = orig->cpu_count,
		.memory_mb = orig->memory_mb,
		.disk_size_mb = orig->disk_size_mb};
	struct net_policy policy;
	struct err berr;
	cJSON *empty = orig->asked_network ? NULL : cJSON_CreateObject();
	int rc = api_network_read_create(orig->asked_network ? orig->asked_network : empty, &spec, &policy,
		&berr);
	struct sandbox *sb = rc == 0 ? registry_create(ctx->reg, &spec, err) : NULL;
	cJSON_Delete(empty);
	if (!sb) {
		if (rc == 0)
			net_policy_free(&policy);
		return NULL;
	}
	struct err why;
	if (net_sandbox_attach(sb, &policy, &why) != 0) {
		fprintf(stderr, "sandbox %s: %.255s\n", sb->id, why.msg);
		registry_kill(ctx->reg, sb);
		err_set(err, 500, "Failed to create sandbox: no network");
		return NULL;
	}
	return sb;
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
	struct err err;
	cJSON *body = body_parse_object(req, BODY_REQUIRED, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t timeout = 0;
	enum field_result r = api_sandboxes_read_timeout(body, &timeout, &err);
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

/* POST /sandboxes/{id}/refreshes {duration?}: keeps a running sandbox
 * alive for duration seconds (0..3600; at least 15, the default), never
 * shortening it (e2b-dev/infra's KeepAliveFor(allowShorter=false)). */
int api_refresh(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t duration = REFRESH_MIN_S;
	enum field_result r = field_int(body, "duration", 0, REFRESH_MAX_S, &duration, &err);
	cJSON_Delete(body);
	if (r == FIELD_BAD)
		return reply_body_error(req, &err);
	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	if (sb->state != SANDBOX_RUNNING)
		return reply_errorf(req, 409, "Sandbox \"%s\" is in paused state", id);
	if (duration < REFRESH_MIN_S)
		duration = REFRESH_MIN_S;
	if (clock_now_ms() + duration * 1000 > sb->end_at_ms)
		registry_set_timeout(ctx->reg, sb, duration);
	return reply_empty(req, 204);
}

int api_pause(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_body_error(req, &err);
	bool memory = true; /* E2B's keepMemory, its default */
	enum field_result r = field_bool(body, "memory", &memory, &err);
	cJSON_Delete(body);
	if (r == FIELD_BAD)
		return reply_body_error(req, &err);

	struct sandbox *sb = registry_find(ctx->reg, id);
	if (!sb)
		return reply_not_found(req, id);
	if (sb->state == SANDBOX_PAUSED)
		return reply_errorf(req, 409, "Sandbox %s is already paused", id);
	registry_pause(ctx->reg, sb, memory);
	return reply_empty(req, 204);
}

/* The network a sandbox asks for (sb->asked_network: create's, as
 * updateNetwork last changed it), set up for it: after create, and again when a sandbox kept from an earlier run
 * starts. 0, or -1 (logged). */
static int attach_network(struct sandbox *sb, const cJSON *asked)
{
	struct sandbox_spec spec = {0};
	struct net_policy policy;
	struct err err;
	cJSON *empty = asked ? NULL : cJSON_CreateObject();
	int rc = api_network_read_create(asked ? asked : empty, &spec, &policy, &err);
	cJSON_Delete(empty);
	if (rc != 0) {
		fprintf(stderr, "sandbox %s: its network: %s\n", sb->id, err.msg);
		return -1;
	}
	if (net_sandbox_attach(sb, &policy, &err) != 0) {
		fprintf(stderr, "sandbox %s: %.255s\n", sb->id, err.msg);
		return -1;
	}
	return 0;
}

/* paused -> running; a sandbox kept from an earlier run gets its network
 * again. -1 with rerr when it stays paused. */
static int resume(struct registry *reg, struct sandbox *sb, int64_t timeout, struct err *rerr)
{
	/* Its network kept across a checkpoint within this run (net/ links it
	 * again); one kept from an earlier run, or paused without memory, gets
	 * it anew. */
	bool unlinked = runtime_sandbox_cold(sb) && !sb->net;
	if (registry_resume(reg, sb, timeout, rerr) != 0)
		return -1;
	if (unlinked && attach_network(sb, sb->asked_network) != 0) {
		registry_pause(reg, sb, false);
		return err_set(rerr, 500, "no network");
	}
	return 0;
}

int api_sandboxes_fork_restore(struct api_ctx *ctx, struct sandbox *fork, const char *image,
	int64_t timeout_s, struct err *why)
{
	/* The processes it started with end; its files stay, and it is cold. */
	registry_pause(ctx->reg, fork, false);
	struct err rerr;
	if (runtime_checkpoint_take(fork, image, why) == 0) {
		if (resume(ctx->reg, fork, timeout_s, &rerr) == 0)
			return 0;
		err_set(why, 0, "%.200s", rerr.msg);
		runtime_checkpoint_discard(fork);
	}
	fprintf(stderr, "sandbox %s: started without its source's processes: %.200s\n", fork->id, why->msg);
	if (resume(ctx->reg, fork, timeout_s, &rerr) != 0) {
		err_set(why, rerr.status ? rerr.status : 500, "Failed to fork the sandbox: %.200s", rerr.msg);
		registry_kill(ctx->reg, fork);
		return -2;
	}
	return -1;
}

/* paused -> running (resume, connect): 201 Sandbox. */
static int resume_sandbox(struct api_ctx *ctx, struct evhttp_request *req, struct sandbox *sb,
	int64_t timeout)
{
	struct err rerr;
	if (resume(ctx->reg, sb, timeout, &rerr) != 0)
		return reply_errorf(req, rerr.status, "Failed to resume sandbox: %s", rerr.msg);
	return reply_json(req, 201, sandbox_json_created(sb, ctx->domain));
}

int api_sandboxes_wake(void *arg, struct sandbox *sb)
{
	struct api_ctx *ctx = arg;
	if (sb->state != SANDBOX_PAUSED || !sb->auto_resume)
		return -1;
	/* E2B's: the timeout it was created with, and at least five minutes. */
	int64_t timeout = sb->timeout_s > AUTO_RESUME_MIN_S ? sb->timeout_s : AUTO_RESUME_MIN_S;
	struct err rerr;
	if (resume(ctx->reg, sb, timeout, &rerr) != 0) {
		fprintf(stderr, "sandbox %s: cannot auto-resume: %s\n", sb->id, rerr.msg);
		return -1;
	}
	fprintf(stderr, "sandbox %s: resumed by a request to it (autoResume), for %lld s\n", sb->id,
		(long long)timeout);
	return 0;
}

int api_resume(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct err err;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t timeout = TIMEOUT_DEFAULT_RESUME;
	bool auto_pause = false, memory;
	enum field_result auto_pause_given = FIELD_BAD;
	if (api_sandboxes_read_timeout(body, &timeout, &err) == FIELD_BAD ||
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
static int connect_sandbox(struct api_ctx *ctx, struct evhttp_request *req, const char *id, bool v2)
{
	struct err err;
	cJSON *body = body_parse_object(req, v2 ? BODY_OPTIONAL : BODY_REQUIRED, &err);
	if (!body)
		return reply_body_error(req, &err);
	int64_t timeout = TIMEOUT_DEFAULT_CONNECT;
	bool memory;
	enum field_result r = api_sandboxes_read_timeout(body, &timeout, &err);
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
