/* struct sandbox: one sandbox as every folder of the backend sees it. It
 * sits on the runtime's floor because the runtime reads it (its id, its
 * directory, its layers and limits) and every folder above holds it; the
 * registry (registry/registry.h) creates, changes and frees it. The fields
 * other folders own are pointers to their own types, opaque here. Types
 * only: no functions. */
#ifndef E2B_BACKEND_RUNTIME_SANDBOX_H
#define E2B_BACKEND_RUNTIME_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct event;
struct registry;

#define SANDBOX_ID_LEN 20       /* [a-z0-9], like E2B's */
#define SANDBOX_CLIENT_ID_LEN 8 /* deprecated field, any string */
#define SANDBOX_TOKEN_LEN 64    /* envdAccessToken, hex */
#define SANDBOX_MAX_TIMEOUT_S 86400
#define SANDBOX_DEFAULT_USER "user" /* E2B's, and the built-in templates' */

enum sandbox_state {
	SANDBOX_RUNNING,
	SANDBOX_PAUSED
};

struct sandbox_rt;
struct sandbox_net;
struct sandbox_metrics;
struct envd_listener;
struct registry_log_entry;

#define SANDBOX_HTTPS_PORTS_MAX 32 /* network.httpsPorts */

/* How a paused sandbox was paused: its processes checkpointed to disk and
 * ended (CRIU), frozen in place (the fallback), or ended with only its
 * files kept (a pause without memory). */
enum sandbox_pause_kind {
	SANDBOX_PAUSE_NONE,
	SANDBOX_PAUSE_CHECKPOINT,
	SANDBOX_PAUSE_FREEZE,
	SANDBOX_PAUSE_FILES
};

struct sandbox {
	char id[SANDBOX_ID_LEN + 1];
	char client_id[SANDBOX_CLIENT_ID_LEN + 1];
	char access_token[SANDBOX_TOKEN_LEN + 1]; /* "" when not secure */
	char token_nonce[33];                     /* its tokens are derived from it (registry_records.h) */
	char *template_id;                        /* the built-in template its root stands on ("base") */
	/* A built template's id and name when it was created from one: what
	 * the API reports as its templateID and alias (E2B's); NULL: template_id. */
	char *template_ref;
	char *template_alias;
	/* The root filesystem's read-only layers, bottom first (absolute paths
	 * of their trees, store_layer.root); NULL: the template's own rootfs. */
	char **layers;
	size_t layer_count;
	char *dir;              /* <state-dir>/sandboxes/<id>, exists while the sandbox does */
	struct cJSON *metadata; /* object of strings, never NULL */
	struct cJSON *env_vars; /* object of strings, never NULL */
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
	bool auto_pause;        /* on expiry: pause instead of kill */
	bool auto_pause_memory; /* ... keeping its memory and processes (autoPauseMemory, default true) */
	/* How its last pause was done, and why when not as asked (kept in its
	 * record): NONE while it has never paused. */
	enum sandbox_pause_kind pause_kind;
	char pause_why[240];
	bool auto_resume;          /* paused: a request to it resumes it (lifecycle.autoResume) */
	int64_t timeout_s;         /* as created: what an auto-resume runs for (at least 300 s) */
	bool internal;             /* the backend's own (a template build's): not listed */
	int allow_internet_access; /* -1 not given, else 0/1 */
	enum sandbox_state state;
	int64_t started_at_ms;
	int64_t end_at_ms;        /* expiry while running; the pause time while paused */
	int64_t left_at_pause_ms; /* while paused: the lifetime it had left (lifetimeLeft) */
	int cpu_count;
	int memory_mb;
	int disk_size_mb;                /* the writable layer's size, enforced with isolation */
	struct sandbox_rt *rt;           /* the runtime's (runtime/runtime_state.h); NULL without isolation */
	struct sandbox_net *net;         /* net/'s (net/net.h); NULL without networking */
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
	char envd_url[96];                   /* that port's URL, "" without one */
	void *user_data;                     /* free for a process manager */
	/* Its log (registry_log.h): oldest first, within REGISTRY_LOG_BYTES. */
	struct registry_log_entry *log_head, *log_tail;
	size_t log_bytes;

	/* private to registry.c */
	struct event *expiry;
	struct event *init_watch; /* on its init's pidfd while it has one */
	struct registry *owner;
};

#endif
