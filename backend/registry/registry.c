/* The sandbox registry: records, lifecycle transitions and expiry timers. */
#include "registry/registry.h"

#include "lib/clock.h"
#include "lib/crashpoint.h"
#include "lib/err.h"
#include "lib/mem_trim.h"
#include "lib/random.h"
#include "lib/text.h"
#include "registry/registry_log.h"
#include "registry/registry_records.h"
#include "store/store_records.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "registry/registry_pause.h"
#include "runtime/runtime_checkpoint.h"
#include "runtime/runtime_halt.h"
#include "runtime/runtime_remove.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct registry {
	struct event_base *base;
	char *sandboxes_dir;
	char *token_key;
	char *state_root;       /* records are kept there (registry_persist), or NULL */
	struct sandbox **items; /* unordered; listing sorts its own copy */
	size_t count, cap;
	struct registry_hooks hooks[REGISTRY_MAX_HOOKS];
	size_t nhooks;
};

struct registry *registry_new(struct event_base *base, const char *sandboxes_dir, const char *token_key)
{
	struct registry *reg = calloc(1, sizeof *reg);
	if (!reg)
		return NULL;
	reg->base = base;
	reg->sandboxes_dir = strdup(sandboxes_dir);
	reg->token_key = strdup(token_key);
	if (!reg->sandboxes_dir || !reg->token_key) {
		free(reg->sandboxes_dir);
		free(reg->token_key);
		free(reg);
		return NULL;
	}
	return reg;
}

int registry_add_hooks(struct registry *reg, const struct registry_hooks *hooks)
{
	if (reg->nhooks == REGISTRY_MAX_HOOKS)
		return -1;
	reg->hooks[reg->nhooks++] = *hooks;
	return 0;
}

enum hook {
	HOOK_CREATED,
	HOOK_PAUSED,
	HOOK_RESUMED,
	HOOK_REMOVING
};

static void fire(struct registry *reg, enum hook which, struct sandbox *sb)
{
	bool forward = which == HOOK_REMOVING || which == HOOK_PAUSED;
	for (size_t k = 0; k < reg->nhooks; k++) {
		const struct registry_hooks *h = &reg->hooks[forward ? k : reg->nhooks - 1 - k];
		void (*fn)(void *, struct sandbox *) = which == HOOK_CREATED ? h->created
			: which == HOOK_PAUSED                               ? h->paused
			: which == HOOK_RESUMED                              ? h->resumed
									     : h->removing;
		if (fn)
			fn(h->ctx, sb);
	}
}

/* Writes sb's record (with persistence). 0, or -1 (logged). */
static int save(struct registry *reg, const struct sandbox *sb)
{
	if (!reg->state_root)
		return 0;
	cJSON *record = registry_records_of(sb, clock_now_ms());
	int rc = record
		? store_records_write(reg->state_root, REGISTRY_RECORDS_KIND, sb->id, record, STORE_VOLATILE)
		: -1;
	cJSON_Delete(record);
	if (rc != 0)
		fprintf(stderr, "sandbox %s: cannot write its record: %s\n", sb->id, strerror(errno));
	return rc;
}

/* Forgets the init's pidfd before the runtime closes it (a closed
 * descriptor's number can be the next one opened). */
static void unwatch_init(struct sandbox *sb)
{
	if (sb->init_watch)
		event_free(sb->init_watch);
	sb->init_watch = NULL;
}

static void sandbox_free(struct sandbox *sb)
{
	unwatch_init(sb);
	if (sb->expiry)
		event_free(sb->expiry);
	cJSON_Delete(sb->metadata);
	cJSON_Delete(sb->env_vars);
	cJSON_Delete(sb->volume_mounts);
	cJSON_Delete(sb->asked_network);
	free(sb->default_user);
	free(sb->default_workdir);
	free(sb->template_id);
	free(sb->template_ref);
	free(sb->template_alias);
	for (size_t i = 0; i < sb->layer_count; i++)
		free(sb->layers[i]);
	free(sb->layers);
	free(sb->mask_request_host);
	free(sb->dir);
	registry_log_free(sb);
	free(sb);
}

void registry_halt_all(struct registry *reg)
{
	for (size_t i = 0; reg && i < reg->count; i++)
		runtime_sandbox_halt(reg->items[i]);
}

void registry_remove_all(struct registry *reg)
{
	while (reg && reg->count > 0) {
		struct sandbox *sb = reg->items[reg->count - 1];
		if (!reg->state_root) {
			registry_kill(reg, sb);
			continue;
		}
		/* Kept: recorded paused (a running one with the lifetime it has
		 * left), its processes stopped, its disk and record kept. */
		reg->count--;
		if (sb->state == SANDBOX_RUNNING) {
			int64_t now = clock_now_ms();
			sb->left_at_pause_ms = sb->end_at_ms > now ? sb->end_at_ms - now : 0;
			sb->end_at_ms = now;
			sb->state = SANDBOX_PAUSED;
		}
		save(reg, sb);
		fire(reg, HOOK_REMOVING, sb);
		unwatch_init(sb);
		runtime_sandbox_stop(sb);
		runtime_state_free(sb->rt); /* the id range goes with this process */
		sb->rt = NULL;
		sandbox_free(sb);
	}
}

void registry_free(struct registry *reg)
{
	if (!reg)
		return;
	registry_remove_all(reg);
	free(reg->items);
	free(reg->sandboxes_dir);
	free(reg->token_key);
	free(reg->state_root);
	free(reg);
}

static void on_expiry(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct sandbox *sb = arg;
	struct registry *reg = sb->owner;
	if (sb->state != SANDBOX_RUNNING)
		return;
	fprintf(stderr, "sandbox %s expired: %s\n", sb->id, sb->auto_pause ? "paused" : "killed");
	if (sb->auto_pause) {
		/* Expired: nothing is left, even when libevent's monotonic timer
		 * fires a little before the wall clock reaches endAt. */
		sb->end_at_ms = clock_now_ms();
		registry_pause(reg, sb, sb->auto_pause_memory);
	} else {
		registry_kill(reg, sb);
	}
}

/* Schedules the expiry callback at end_at_ms (immediately if already past). */
static void arm_expiry(struct sandbox *sb)
{
	int64_t delay = sb->end_at_ms - clock_now_ms();
	if (delay < 0)
		delay = 0;
	struct timeval tv = {.tv_sec = (time_t)(delay / 1000), .tv_usec = (suseconds_t)(delay % 1000) * 1000};
	evtimer_add(sb->expiry, &tv);
}

/* Its init ended on its own: killed from the host, by the out-of-memory
 * killer, or it crashed. Every process of the sandbox went with it, so the
 * sandbox is gone, as one whose VM died is on E2B: removed at once rather
 * than answering each command 'unavailable' until it expires. */
static void on_init_ended(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct sandbox *sb = arg;
	fprintf(stderr, "sandbox %s: its init ended on its own; the sandbox is removed\n", sb->id);
	registry_kill(sb->owner, sb);
}

/* Watches the init a running sandbox has now (a pooled one's, or the one
 * a cold resume started). */
static void watch_init(struct sandbox *sb)
{
	unwatch_init(sb);
	int fd = runtime_sandbox_init_fd(sb);
	if (fd < 0)
		return;
	sb->init_watch = event_new(sb->owner->base, fd, EV_READ, on_init_ended, sb);
	if (!sb->init_watch || event_add(sb->init_watch, NULL) != 0) {
		fprintf(stderr,
			"sandbox %s: cannot watch its init; an init that ends is noticed "
			"only by its commands\n",
			sb->id);
		unwatch_init(sb);
	}
}

/* A sandbox dup of a caller's object, or an empty object. */
static cJSON *copy_object(const cJSON *src)
{
	return src ? cJSON_Duplicate(src, 1) : cJSON_CreateObject();
}

static int grow(struct registry *reg)
{
	if (reg->count < reg->cap)
		return 0;
	size_t cap = reg->cap ? reg->cap * 2 : 16;
	struct sandbox **items = realloc(reg->items, cap * sizeof *items);
	if (!items)
		return -1;
	reg->items = items;
	reg->cap = cap;
	return 0;
}

static int copy_layers(struct sandbox *sb, const struct sandbox_spec *spec)
{
	if (spec->layer_count == 0)
		return 0;
	sb->layers = calloc(spec->layer_count, sizeof *sb->layers);
	if (!sb->layers)
		return -1;
	for (; sb->layer_count < spec->layer_count; sb->layer_count++)
		if (!(sb->layers[sb->layer_count] = strdup(spec->layers[sb->layer_count])))
			return -1;
	return 0;
}

/* Picks an unused ID and makes its directory (mkdir also guards against a
 * stale directory left by an earlier run with the same --state-dir). */
static int assign_id_and_dir(struct registry *reg, struct sandbox *sb)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		if (random_lower_alnum(sb->id, SANDBOX_ID_LEN) != 0)
			return -1;
		if (registry_find(reg, sb->id))
			continue;
		char *dir = text_printf("%s/%s", reg->sandboxes_dir, sb->id);
		if (!dir)
			return -1;
		if (mkdir(dir, 0700) == 0) {
			sb->dir = dir;
			return 0;
		}
		int err = errno;
		free(dir);
		if (err != EEXIST) {
			fprintf(stderr, "cannot create sandbox directory: %s\n", strerror(err));
			return -1;
		}
	}
	return -1;
}

struct sandbox *registry_launch_reserved(struct registry *reg, const struct sandbox_spec *spec,
	struct err *err)
{
	err_set(err, 500, "Failed to create sandbox");
	struct sandbox *sb = calloc(1, sizeof *sb);
	if (!sb)
		return NULL;
	sb->owner = reg;
	sb->template_id = strdup(spec->template_id);
	sb->metadata = cJSON_CreateObject();
	sb->env_vars = cJSON_CreateObject();
	sb->volume_mounts =
		spec->volume_mounts ? cJSON_Duplicate(spec->volume_mounts, 1) : cJSON_CreateArray();
	sb->expiry = evtimer_new(reg->base, on_expiry, sb);
	if (!sb->template_id || !sb->metadata || !sb->env_vars || !sb->volume_mounts || !sb->expiry ||
		random_hex(sb->client_id, SANDBOX_CLIENT_ID_LEN) != 0 ||
		random_hex(sb->token_nonce, sizeof sb->token_nonce - 1) != 0 || copy_layers(sb, spec) != 0 ||
		assign_id_and_dir(reg, sb) != 0) {
		sandbox_free(sb);
		return NULL;
	}
	sb->cpu_count = spec->cpu_count;
	sb->memory_mb = spec->memory_mb;
	sb->disk_size_mb = spec->disk_size_mb;
	sb->internal = true; /* nobody's until claimed */
	if (runtime_sandbox_reserve(sb, err) != 0) {
		runtime_sandbox_remove(sb);
		sandbox_free(sb);
		return NULL;
	}
	return sb;
}

struct sandbox *registry_launch(struct registry *reg, const struct sandbox_spec *spec, struct err *err)
{
	struct sandbox *sb = registry_launch_reserved(reg, spec, err);
	if (sb && runtime_sandbox_build(sb, err) != 0) {
		runtime_sandbox_remove(sb);
		sandbox_free(sb);
		return NULL;
	}
	return sb;
}

int registry_claim(struct registry *reg, struct sandbox *sb, const struct sandbox_spec *spec, struct err *err)
{
	err_set(err, 500, "Failed to create sandbox");
	cJSON *metadata = copy_object(spec->metadata), *env_vars = copy_object(spec->env_vars);
	cJSON *network = spec->asked_network ? cJSON_Duplicate(spec->asked_network, 1) : NULL;
	char *mask = spec->mask_request_host ? strdup(spec->mask_request_host) : NULL;
	char *user = spec->default_user ? strdup(spec->default_user) : NULL;
	char *workdir = spec->default_workdir ? strdup(spec->default_workdir) : NULL;
	char *ref = spec->template_ref ? strdup(spec->template_ref) : NULL;
	char *alias = spec->template_alias ? strdup(spec->template_alias) : NULL;
	if (!metadata || !env_vars || (spec->asked_network && !network) ||
		(spec->mask_request_host && !mask) || (spec->default_user && !user) ||
		(spec->default_workdir && !workdir) || (spec->template_ref && !ref) ||
		(spec->template_alias && !alias) || grow(reg) != 0 ||
		registry_records_tokens(sb, reg->token_key, spec->secure, spec->private_traffic) != 0) {
		cJSON_Delete(metadata);
		cJSON_Delete(env_vars);
		cJSON_Delete(network);
		free(mask);
		free(user);
		free(workdir);
		free(ref);
		free(alias);
		return -1;
	}
	cJSON_Delete(sb->metadata);
	cJSON_Delete(sb->env_vars);
	sb->metadata = metadata;
	sb->env_vars = env_vars;
	sb->asked_network = network;
	sb->mask_request_host = mask;
	memcpy(sb->https_ports, spec->https_ports, sizeof sb->https_ports);
	sb->n_https_ports = spec->n_https_ports;
	free(sb->default_user);
	free(sb->default_workdir);
	sb->default_user = user;
	sb->default_workdir = workdir;
	free(sb->template_ref);
	free(sb->template_alias);
	sb->template_ref = ref;
	sb->template_alias = alias;
	sb->secure = spec->secure;
	sb->auto_pause = spec->auto_pause;
	sb->auto_pause_memory = !spec->auto_pause_files;
	sb->auto_resume = spec->auto_resume;
	sb->timeout_s = spec->timeout_s;
	sb->internal = spec->internal;
	sb->allow_internet_access = spec->allow_internet_access;
	sb->state = SANDBOX_RUNNING;
	sb->started_at_ms = clock_now_ms();
	sb->end_at_ms = sb->started_at_ms + spec->timeout_s * 1000;
	crashpoint("sandbox-started");
	if (save(reg, sb) != 0)
		return err_set(err, 500, "Failed to create sandbox: cannot record it");
	reg->items[reg->count++] = sb;
	arm_expiry(sb);
	watch_init(sb);
	fire(reg, HOOK_CREATED, sb);
	return 0;
}

void registry_discard(struct registry *reg, struct sandbox *sb)
{
	fire(reg, HOOK_REMOVING, sb);
	unwatch_init(sb);
	runtime_sandbox_remove(sb);
	sandbox_free(sb);
}

struct sandbox *registry_create(struct registry *reg, const struct sandbox_spec *spec, struct err *err)
{
	struct sandbox *sb = registry_launch(reg, spec, err);
	if (!sb)
		return NULL;
	if (runtime_sandbox_await(sb, err) != 0 || registry_claim(reg, sb, spec, err) != 0) {
		runtime_sandbox_remove(sb);
		sandbox_free(sb);
		return NULL;
	}
	return sb;
}

struct sandbox *registry_find(const struct registry *reg, const char *id)
{
	for (size_t i = 0; i < reg->count; i++)
		if (strcmp(reg->items[i]->id, id) == 0)
			return reg->items[i];
	return NULL;
}

const char *registry_default_user(const struct sandbox *sb)
{
	return sb->default_user ? sb->default_user : SANDBOX_DEFAULT_USER;
}

void registry_kill(struct registry *reg, struct sandbox *sb)
{
	/* The record goes first: after a crash, a directory without a record
	 * is removed at the next start; the reverse would bring back a
	 * sandbox without its files. */
	if (reg->state_root &&
		store_records_delete(reg->state_root, REGISTRY_RECORDS_KIND, sb->id, STORE_VOLATILE) != 0)
		fprintf(stderr, "sandbox %s: cannot remove its record: %s\n", sb->id, strerror(errno));
	for (size_t i = 0; i < reg->count; i++) {
		if (reg->items[i] != sb)
			continue;
		reg->items[i] = reg->items[--reg->count];
		break;
	}
	fire(reg, HOOK_REMOVING, sb);
	unwatch_init(sb);
	runtime_sandbox_remove(sb); /* kills it now; deletes its directory off the loop */
	sandbox_free(sb);
	mem_trim_soon(); /* its queues, buffers and streams are freed */
}

void registry_pause(struct registry *reg, struct sandbox *sb, bool memory)
{
	evtimer_del(sb->expiry);
	sb->state = SANDBOX_PAUSED;
	/* Like E2B's snapshot listing: a paused sandbox's endAt is when it paused.
	 * Its clock stops: what was left is kept, for clients to resume with. */
	int64_t now = clock_now_ms();
	sb->left_at_pause_ms = sb->end_at_ms > now ? sb->end_at_ms - now : 0;
	sb->end_at_ms = now;
	unwatch_init(sb);
	registry_pause_processes(reg->hooks, reg->nhooks, sb, memory);
	if (!runtime_sandbox_cold(sb))
		watch_init(sb);
	save(reg, sb);
	fire(reg, HOOK_PAUSED, sb);
}

int registry_fork_image(struct registry *reg, struct sandbox *sb, const char *dir, struct err *err)
{
	return registry_pause_copy(reg->hooks, reg->nhooks, sb, dir, err);
}

int registry_resume(struct registry *reg, struct sandbox *sb, int64_t timeout_s, struct err *err)
{
	bool restored = false;
	if (runtime_sandbox_cold(sb) && runtime_checkpoint_present(sb)) {
		if (runtime_checkpoint_restore(sb, err) != 0)
			return -1; /* cold, its image kept */
		restored = true;
		watch_init(sb);
	} else if (runtime_sandbox_cold(sb)) {
		if (runtime_sandbox_start(sb, err) != 0) {
			runtime_sandbox_stop(sb); /* cold again, its disk kept */
			return -1;
		}
		watch_init(sb);
	}
	if (restored)
		registry_pause_step(reg->hooks, reg->nhooks, sb, REGISTRY_CKPT_RESTORED);
	sb->pause_kind = SANDBOX_PAUSE_NONE;
	sb->pause_why[0] = 0;
	int64_t now = clock_now_ms();
	sb->state = SANDBOX_RUNNING;
	/* E2B starts a resumed sandbox afresh: startedAt is the resume time. */
	sb->started_at_ms = now;
	sb->end_at_ms = now + timeout_s * 1000;
	arm_expiry(sb);
	runtime_sandbox_freeze(sb, false);
	save(reg, sb);
	fire(reg, HOOK_RESUMED, sb);
	return 0;
}

void registry_set_timeout(struct registry *reg, struct sandbox *sb, int64_t timeout_s)
{
	(void)reg;
	sb->end_at_ms = clock_now_ms() + timeout_s * 1000;
	if (sb->state == SANDBOX_RUNNING)
		arm_expiry(sb); /* evtimer_add on a pending timer reschedules it */
	save(reg, sb);
}

void registry_set_network(struct registry *reg, struct sandbox *sb, cJSON *asked)
{
	cJSON_Delete(sb->asked_network);
	sb->asked_network = asked;
	save(reg, sb);
}

void registry_persist(struct registry *reg, const char *state_root)
{
	free(reg->state_root);
	reg->state_root = state_root ? strdup(state_root) : NULL;
}

struct restore_walk {
	struct registry *reg;
	size_t restored;
};

static int restore_one(void *ctx, const char *id, cJSON *record)
{
	struct restore_walk *w = ctx;
	struct registry *reg = w->reg;
	struct sandbox *sb = calloc(1, sizeof *sb);
	uint32_t id_base = 0;
	struct stat st;
	struct err why;
	if (!sb || grow(reg) != 0) {
		free(sb);
		cJSON_Delete(record);
		return 0;
	}
	sb->owner = reg;
	sb->expiry = evtimer_new(reg->base, on_expiry, sb);
	int rc = sb->expiry ? registry_records_load(sb, record, reg->token_key, &id_base) : -1;
	cJSON_Delete(record);
	if (rc != 0 || strcmp(sb->id, id) != 0) {
		fprintf(stderr, "e2b-local-backend: record of sandbox %s is not one; skipped\n", id);
		sandbox_free(sb);
		return 0;
	}
	sb->dir = text_printf("%s/%s", reg->sandboxes_dir, sb->id);
	if (sb->dir && (stat(sb->dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
		/* Its files are gone: so is the sandbox. */
		fprintf(stderr,
			"e2b-local-backend: sandbox %s has a record but no directory; "
			"removing the record\n",
			sb->id);
		store_records_delete(reg->state_root, REGISTRY_RECORDS_KIND, sb->id, STORE_VOLATILE);
		sandbox_free(sb);
		return 0;
	}
	if (!sb->dir || runtime_sandbox_adopt(sb, (uid_t)id_base, &why) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot bring back sandbox %s: %s\n", sb->id,
			sb->dir ? why.msg : "out of memory");
		sandbox_free(sb);
		return 0;
	}
	registry_pause_after_restart(sb);
	reg->items[reg->count++] = sb;
	fire(reg, HOOK_CREATED, sb);
	w->restored++;
	return 0;
}

size_t registry_restore(struct registry *reg)
{
	struct restore_walk w = {.reg = reg};
	if (reg->state_root)
		store_records_each(reg->state_root, REGISTRY_RECORDS_KIND, restore_one, &w);
	return w.restored;
}

size_t registry_count(const struct registry *reg)
{
	return reg->count;
}

struct sandbox *registry_at(const struct registry *reg, size_t i)
{
	return i < reg->count ? reg->items[i] : NULL;
}
