/* registry/ — every sandbox the backend knows about, and the lifecycle
 * rules that change them: create, pause, resume, timeout changes, kill, and
 * expiry at endAt.
 * Owns: the sandboxes' lifecycle (struct sandbox itself is
 * runtime/runtime_sandbox.h's, below the runtime that reads it) and the
 * hooks other folders register to follow a sandbox's life (registry_hooks).
 * May call: runtime/ (start, freeze, remove a sandbox) and lib/. It calls
 * the folders above it only through the hooks they registered (main.c adds
 * them: the sandboxes' own envd ports, the watchers, the process manager),
 * never by name. */
#ifndef E2B_BACKEND_REGISTRY_H
#define E2B_BACKEND_REGISTRY_H

#include "runtime/runtime_sandbox.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct event;
struct event_base;
struct registry;

/* What a create request asks for; the registry copies everything. */
struct sandbox_spec {
	const char *template_id;
	const char *template_ref; /* a built template's id and name, NULL = none (struct sandbox) */
	const char *template_alias;
	const char *const *layers; /* bottom first, copied; NULL: the template's rootfs */
	size_t layer_count;
	int64_t timeout_s;
	const struct cJSON *metadata;      /* NULL = none */
	const struct cJSON *env_vars;      /* NULL = none */
	const struct cJSON *volume_mounts; /* [{name, volumeID, path}], NULL = none */
	const struct cJSON *asked_network; /* {allow_internet_access?, network?}, NULL = none */
	const char *default_user;          /* NULL = SANDBOX_DEFAULT_USER */
	const char *default_workdir;       /* NULL = the user's home */
	bool secure;
	bool auto_pause;
	bool auto_pause_files; /* autoPauseMemory false: a timeout's pause keeps files only */
	bool auto_resume;
	bool internal;                 /* the backend's own: hidden from the API */
	int allow_internet_access;     /* -1 not given */
	bool private_traffic;          /* network.allowPublicTraffic false: issue a traffic token */
	const char *mask_request_host; /* network.maskRequestHost, NULL = none */
	uint16_t https_ports[SANDBOX_HTTPS_PORTS_MAX]; /* network.httpsPorts */
	size_t n_https_ports;
	int cpu_count;
	int memory_mb;
	int disk_size_mb;
};

/* The steps of a pause that ends a sandbox's processes (the checkpoint
 * hook): BEFORE a checkpoint (park the commands' descriptors in the init,
 * take the network link away), FAILED (it runs on: undo BEFORE), RESTORED
 * (running again from its image: take the descriptors back, link again),
 * STOPPED (paused without memory: its processes ended, its files kept). */
enum registry_checkpoint_step {
	REGISTRY_CKPT_BEFORE,
	REGISTRY_CKPT_FAILED,
	REGISTRY_CKPT_RESTORED,
	REGISTRY_CKPT_STOPPED
};

/* Called around lifecycle changes. Any pointer may be NULL. */
struct registry_hooks {
	void *ctx;
	void (*created)(void *ctx, struct sandbox *sb);
	void (*paused)(void *ctx, struct sandbox *sb);   /* now paused: stop its processes */
	void (*resumed)(void *ctx, struct sandbox *sb);  /* running again */
	void (*removing)(void *ctx, struct sandbox *sb); /* about to be freed, dir still there */
	void (*checkpoint)(void *ctx, struct sandbox *sb, enum registry_checkpoint_step step);
};

/* token_key: what the sandboxes' tokens are derived from (the API key). */
struct registry *registry_new(struct event_base *base, const char *sandboxes_dir, const char *token_key);
/* Shutdown, before registry_free: every sandbox's processes are killed at
 * once, a paused one's too (runtime_halt.h), with no hook fired and nothing
 * waited for. Their records and disks are untouched. */
void registry_halt_all(struct registry *reg);
/* Removes every sandbox (hooks fire, directories are deleted); with
 * persistence (registry_persist.h) every sandbox is kept instead: recorded
 * paused, its processes stopped, its disk kept. The registry stays, empty. */
void registry_remove_all(struct registry *reg);
/* registry_remove_all, then the registry itself goes. */
void registry_free(struct registry *reg);
/* Adds a set of hooks (at most REGISTRY_MAX_HOOKS). Like constructors and
 * destructors: `removing` and `paused` run in the order the sets were
 * added, `created` and `resumed` in the reverse order. So the set added
 * first (the one that owns a sandbox's connections) cuts its streams before
 * the others kill its processes, and opens last. 0, or -1 when full. */
#define REGISTRY_MAX_HOOKS 8
int registry_add_hooks(struct registry *reg, const struct registry_hooks *hooks);

struct err;
/* Creates a running sandbox with its directory, runtime (root, init,
 * cgroups) and expiry timer. NULL on failure with err set (an HTTP
 * status; so are the other functions' here). */
struct sandbox *registry_create(struct registry *reg, const struct sandbox_spec *spec, struct err *err);
/* registry_create in three steps, for sandboxes made before anyone asks
 * (warm/): registry_launch makes one of spec's template, layers, volumes
 * and resources and lets its init go (runtime_sandbox_launch: wait for it
 * with runtime_sandbox_await); it is nobody's and in no list. registry_claim
 * gives it spec's metadata, environment, default user and workdir, tokens,
 * network fields and lifetime, records it and adds it (on failure it stays unclaimed);
 * registry_discard removes one never claimed. */
struct sandbox *registry_launch(struct registry *reg, const struct sandbox_spec *spec, struct err *err);
/* registry_launch up to runtime_sandbox_reserve: what must run on the loop.
 * The caller then runs runtime_sandbox_build (on a worker, if it likes) and
 * registry_discard's the sandbox if that fails. */
struct sandbox *registry_launch_reserved(struct registry *reg, const struct sandbox_spec *spec,
	struct err *err);
int registry_claim(struct registry *reg, struct sandbox *sb, const struct sandbox_spec *spec,
	struct err *err);
void registry_discard(struct registry *reg, struct sandbox *sb);
struct sandbox *registry_find(const struct registry *reg, const char *id);
/* The user a request that names none acts as: sb->default_user, or
 * SANDBOX_DEFAULT_USER. */
const char *registry_default_user(const struct sandbox *sb);

/* Removes the sandbox: its processes die at once, its directory, mount and
 * cgroups go off the event loop (runtime/runtime_remove.h); sb is freed. */
void registry_kill(struct registry *reg, struct sandbox *sb);
/* running -> paused: stops the expiry timer, endAt becomes the pause time
 * and the lifetime left is kept (0 when it paused on expiry). With memory,
 * its processes are checkpointed where the runtime can
 * (runtime_checkpoint.h), else frozen; without, they end and its files are
 * kept. sb->pause_kind and sb->pause_why say which it got. */
void registry_pause(struct registry *reg, struct sandbox *sb, bool memory);
/* A running sandbox's processes and memory dumped into dir (new) for its
 * forks while they run on (registry_pause.h): 0, or -1 with why not in err
 * (status 0). A fork is given the image with runtime_checkpoint_take while
 * paused, cold, and resumed. */
int registry_fork_image(struct registry *reg, struct sandbox *sb, const char *dir, struct err *err);
/* paused -> running with endAt = now + timeout_s. A sandbox kept from an
 * earlier run (runtime_sandbox_cold) is started again on its own disk
 * first; -1 with err when that fails (it stays paused). */
int registry_resume(struct registry *reg, struct sandbox *sb, int64_t timeout_s, struct err *err);
/* endAt = now + timeout_s (shorter or longer) and re-arms the timer. */
void registry_set_timeout(struct registry *reg, struct sandbox *sb, int64_t timeout_s);
/* Its network as now asked for (updateNetwork; asked is taken, NULL none),
 * recorded so that a restart sets it up so again. */
void registry_set_network(struct registry *reg, struct sandbox *sb, struct cJSON *asked);

/* Persistence (--state-dir): every sandbox has a record in
 * <state_root>/records/sandboxes (registry_records.h), written when it is
 * created (before the answer: a create whose record cannot be written
 * fails) and whenever its state or lifetime changes, removed first when it
 * is killed. Call before anything is created. */
void registry_persist(struct registry *reg, const char *state_root);
/* Brings back the sandboxes of the records (after the hooks are added):
 * each is paused, cold (runtime_sandbox_adopt), with its lifetime left;
 * `created` hooks fire. Records whose directory is gone are removed. The
 * number brought back. */
size_t registry_restore(struct registry *reg);

size_t registry_count(const struct registry *reg);
struct sandbox *registry_at(const struct registry *reg, size_t i);

#endif
