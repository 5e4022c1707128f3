/* registry/ — every sandbox the backend knows about, and the lifecycle
 * rules that change them: create, pause, resume, timeout changes, kill, and
 * expiry at endAt.
 * Owns: struct sandbox and the hooks other folders register to follow a
 * sandbox's life (registry_hooks).
 * May call: runtime/ (start, freeze, remove a sandbox) and lib/. It calls
 * the folders above it only through the hooks they registered (main.c adds
 * them: the sandboxes' own envd ports, the watchers, the process manager),
 * never by name. */
#ifndef E2B_BACKEND_REGISTRY_H
#define E2B_BACKEND_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct event;
struct event_base;
struct registry;

#define SANDBOX_ID_LEN 20        /* [a-z0-9], like E2B's */
#define SANDBOX_CLIENT_ID_LEN 8  /* deprecated field, any string */
#define SANDBOX_TOKEN_LEN 64     /* envdAccessToken, hex */
#define SANDBOX_MAX_TIMEOUT_S 86400
#define SANDBOX_DEFAULT_USER "user" /* E2B's, and the built-in templates' */

enum sandbox_state { SANDBOX_RUNNING, SANDBOX_PAUSED };

struct sandbox_rt;
struct sandbox_net;
struct sandbox_metrics;
struct envd_listener;
struct registry_log_entry;

#define SANDBOX_HTTPS_PORTS_MAX 32 /* network.httpsPorts */

struct sandbox {
	char id[SANDBOX_ID_LEN + 1];
	char client_id[SANDBOX_CLIENT_ID_LEN + 1];
	char access_token[SANDBOX_TOKEN_LEN + 1]; /* "" when not secure */
	char token_nonce[33];    /* its tokens are derived from it (registry_records.h) */
	char *template_id;       /* the built-in template its root stands on ("base") */
	/* A built template's id and name when it was created from one: what
	 * the API reports as its templateID and alias (E2B's); NULL: template_id. */
	char *template_ref;
	char *template_alias;
	/* The root filesystem's read-only layers, bottom first (absolute paths
	 * of their trees, store_layer.root); NULL: the template's own rootfs. */
	char **layers;
	size_t layer_count;
	char *dir;               /* <state-dir>/sandboxes/<id>, exists while the sandbox does */
	struct cJSON *metadata;  /* object of strings, never NULL */
	struct cJSON *env_vars;  /* object of strings, never NULL */
	/* [{name, volumeID, path}]: the volumes mounted in it, never NULL */
	struct cJSON *volume_mounts;
	/* {allow_internet_access?, network?} as asked at create and changed by
	 * updateNetwork since, or NULL: what its network is set up from again
	 * after a restart, and its forks' */
	struct cJSON *asked_network;
	/* Its template's last user and working directory (E2B's defaultUser
	 * and defaultWorkdir, which envd gets in /init): a command or a file
	 * request that names no user runs as default_user, a command without
	 * cwd starts in default_workdir. NULL: SANDBOX_DEFAULT_USER, and the
	 * user's home. Kept in its record; its snapshots and forks inherit them. */
	char *default_user;
	char *default_workdir;
	bool secure;
	bool auto_pause;         /* on expiry: pause instead of kill */
	bool auto_resume;        /* paused: a request to it resumes it (lifecycle.autoResume) */
	int64_t timeout_s;       /* as created: what an auto-resume runs for (at least 300 s) */
	bool internal;           /* the backend's own (a template build's): not listed */
	int allow_internet_access; /* -1 not given, else 0/1 */
	enum sandbox_state state;
	int64_t started_at_ms;
	int64_t end_at_ms;       /* expiry while running; the pause time while paused */
	int64_t left_at_pause_ms; /* while paused: the lifetime it had left (lifetimeLeft) */
	int cpu_count;
	int memory_mb;
	int disk_size_mb;        /* the writable layer's size, enforced with isolation */
	struct sandbox_rt *rt;   /* the runtime's (runtime/runtime_state.h); NULL without isolation */
	struct sandbox_net *net; /* net/'s (net/net.h); NULL without networking */
	struct sandbox_metrics *metrics; /* metrics/'s samples (metrics/metrics.h); NULL without cgroups */
	/* Ingress (network.allowPublicTraffic false, maskRequestHost): the token
	 * every request to a port other than envd's must carry, "" when public;
	 * the Host the sandbox's servers see ("${PORT}" replaced), or NULL. */
	char traffic_token[SANDBOX_TOKEN_LEN + 1];
	char *mask_request_host;
	/* network.httpsPorts: ports whose servers speak TLS; ingress to them is
	 * re-encrypted on the hop into the sandbox (not verified, as on E2B). */
	uint16_t https_ports[SANDBOX_HTTPS_PORTS_MAX];
	size_t n_https_ports;
	struct envd_listener *envd_listener; /* its own envd port (envd_listener.h), or NULL */
	char envd_url[96];       /* that port's URL, "" without one */
	void *user_data;         /* free for a process manager */
	/* Its log (registry_log.h): oldest first, within REGISTRY_LOG_BYTES. */
	struct registry_log_entry *log_head, *log_tail;
	size_t log_bytes;

	/* private to registry.c */
	struct event *expiry;
	struct event *init_watch; /* on its init's pidfd while it has one */
	struct registry *owner;
};

/* What a create request asks for; the registry copies everything. */
struct sandbox_spec {
	const char *template_id;
	const char *template_ref;     /* a built template's id and name, NULL = none (struct sandbox) */
	const char *template_alias;
	const char *const *layers;    /* bottom first, copied; NULL: the template's rootfs */
	size_t layer_count;
	int64_t timeout_s;
	const struct cJSON *metadata; /* NULL = none */
	const struct cJSON *env_vars; /* NULL = none */
	const struct cJSON *volume_mounts; /* [{name, volumeID, path}], NULL = none */
	const struct cJSON *asked_network; /* {allow_internet_access?, network?}, NULL = none */
	const char *default_user;     /* NULL = SANDBOX_DEFAULT_USER */
	const char *default_workdir;  /* NULL = the user's home */
	bool secure;
	bool auto_pause;
	bool auto_resume;
	bool internal;                /* the backend's own: hidden from the API */
	int allow_internet_access;    /* -1 not given */
	bool private_traffic;         /* network.allowPublicTraffic false: issue a traffic token */
	const char *mask_request_host; /* network.maskRequestHost, NULL = none */
	uint16_t https_ports[SANDBOX_HTTPS_PORTS_MAX]; /* network.httpsPorts */
	size_t n_https_ports;
	int cpu_count;
	int memory_mb;
	int disk_size_mb;
};

/* Called around lifecycle changes. Any pointer may be NULL. */
struct registry_hooks {
	void *ctx;
	void (*created)(void *ctx, struct sandbox *sb);
	void (*paused)(void *ctx, struct sandbox *sb);   /* now paused: stop its processes */
	void (*resumed)(void *ctx, struct sandbox *sb);  /* running again */
	void (*removing)(void *ctx, struct sandbox *sb); /* about to be freed, dir still there */
};

/* token_key: what the sandboxes' tokens are derived from (the API key). */
struct registry *registry_new(struct event_base *base, const char *sandboxes_dir,
	const char *token_key);
/* Shutdown, before registry_free: every sandbox's processes are killed at
 * once, a paused one's too (runtime_halt.h), with no hook fired and nothing
 * waited for. Their records and disks are untouched. */
void registry_halt_all(struct registry *reg);
/* Removes every sandbox (hooks fire, directories are deleted); with
 * persistence (registry_persist.h) every sandbox is kept instead: recorded
 * paused, its processes stopped, its disk kept. */
void registry_free(struct registry *reg);
/* Adds a set of hooks (at most REGISTRY_MAX_HOOKS). Like constructors and
 * destructors: `removing` and `paused` run in the order the sets were
 * added, `created` and `resumed` in the reverse order. So the set added
 * first (the one that owns a sandbox's connections) cuts its streams before
 * the others kill its processes, and opens last. 0, or -1 when full. */
#define REGISTRY_MAX_HOOKS 8
int registry_add_hooks(struct registry *reg, const struct registry_hooks *hooks);

struct runtime_error;
/* Creates a running sandbox with its directory, runtime (root, init,
 * cgroups) and expiry timer. NULL on failure with err set. */
struct sandbox *registry_create(struct registry *reg, const struct sandbox_spec *spec,
	struct runtime_error *err);
/* registry_create in three steps, for sandboxes made before anyone asks
 * (warm/): registry_launch makes one of spec's template, layers, volumes
 * and resources and lets its init go (runtime_sandbox_launch: wait for it
 * with runtime_sandbox_await); it is nobody's and in no list. registry_claim
 * gives it spec's metadata, environment, default user and workdir, tokens,
 * network fields and lifetime, records it and adds it (on failure it stays unclaimed);
 * registry_discard removes one never claimed. */
struct sandbox *registry_launch(struct registry *reg, const struct sandbox_spec *spec,
	struct runtime_error *err);
/* registry_launch up to runtime_sandbox_reserve: what must run on the loop.
 * The caller then runs runtime_sandbox_build (on a worker, if it likes) and
 * registry_discard's the sandbox if that fails. */
struct sandbox *registry_launch_reserved(struct registry *reg, const struct sandbox_spec *spec,
	struct runtime_error *err);
int registry_claim(struct registry *reg, struct sandbox *sb, const struct sandbox_spec *spec,
	struct runtime_error *err);
void registry_discard(struct registry *reg, struct sandbox *sb);
struct sandbox *registry_find(const struct registry *reg, const char *id);
/* The user a request that names none acts as: sb->default_user, or
 * SANDBOX_DEFAULT_USER. */
const char *registry_default_user(const struct sandbox *sb);

/* Removes the sandbox: its processes die at once, its directory, mount and
 * cgroups go off the event loop (runtime/runtime_remove.h); sb is freed. */
void registry_kill(struct registry *reg, struct sandbox *sb);
/* running -> paused: stops the expiry timer, endAt becomes the pause time
 * and the lifetime left is kept (0 when it paused on expiry). */
void registry_pause(struct registry *reg, struct sandbox *sb);
/* paused -> running with endAt = now + timeout_s. A sandbox kept from an
 * earlier run (runtime_sandbox_cold) is started again on its own disk
 * first; -1 with err when that fails (it stays paused). */
int registry_resume(struct registry *reg, struct sandbox *sb, int64_t timeout_s,
	struct runtime_error *err);
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
