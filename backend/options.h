/* Command-line options and the loopback-only listening policy. */
#ifndef E2B_BACKEND_OPTIONS_H
#define E2B_BACKEND_OPTIONS_H

#include "images/images.h"
#include "runtime/runtime.h"

#include <stdbool.h>
#include <stdint.h>

struct listen_addr {
	char host[64]; /* literal address, brackets removed ("::1") */
	uint16_t port; /* 0 = ephemeral */
};

/* Where the API key comes from when --api-key-file is not given. */
#define API_KEY_ENV "E2B_LOCAL_API_KEY"
#define OPTIONS_DEFAULT_MAX_SANDBOXES 256
#define OPTIONS_DEFAULT_REQUEST_TIMEOUT_S 30
#define OPTIONS_DEFAULT_MAX_UPLOAD_MB 4096
#define OPTIONS_DEFAULT_MAX_SANDBOX_REQUESTS 256
#define OPTIONS_DEFAULT_PROXY_IDLE_TIMEOUT_S 600
#define OPTIONS_DEFAULT_SANDBOX_CONN_LIMIT 4096
#define OPTIONS_DEFAULT_MAX_WATCHES 8192

struct backend_options {
	struct listen_addr api;
	struct listen_addr envd;
	char api_key[1024];    /* from the file or the environment; never printed */
	const char *state_dir; /* NULL: a mkdtemp dir the backend owns */
	bool allow_remote;
	bool connect_may_shorten;
	long max_sandboxes;
	long max_connections; /* 0: the default, bounded by the descriptor limit */
	long request_timeout_s;
	long max_upload_mb;         /* one POST /files body, inflated */
	long max_sandbox_requests;  /* requests in progress per sandbox */
	long proxy_idle_timeout_s;  /* a proxied connection silent both ways */
	long max_watches;           /* inotify watches per sandbox, its watchers together */
	enum isolation isolation;   /* default ISOLATION_AUTO */
	const char *id_range;       /* --id-range START:COUNT, NULL: the default */
	const char *templates_dir;  /* NULL: <dir of the binary>/../templates */
	const char *domain;         /* NULL: localhost:<envd port> */
	const char *sandbox_subnet; /* NULL: net/'s default */
	long sandbox_conn_limit;
	bool sandbox_network;         /* --sandbox-network on (default) | off */
	const char *egress_ca_file;   /* --egress-ca-file: more CAs the egress proxy trusts upstream */
	long metrics_interval_s;      /* --metrics-interval: seconds between samples */
	struct images_options images; /* --registry-mirror (repeatable), --no-docker-hub, --max-image-mb */
	long warm_pool;               /* --warm-pool: sandboxes started ahead (warm/) */
	long warm_templates;          /* --warm-templates: built templates with a pool too */
	long warm_template_idle_s;    /* --warm-template-idle: seconds unused before one is dropped */
	bool cgroup_favor_dynmods;    /* --cgroup-favor-dynmods on (default) | off */
};

enum options_result {
	OPTIONS_OK,
	OPTIONS_EXIT_OK,   /* --help was printed */
	OPTIONS_EXIT_USAGE /* a message was printed; exit status 2 */
};

/* Parses argv and takes the API key from --api-key-file or $E2B_LOCAL_API_KEY
 * (the variable is removed from the environment either way). */
enum options_result options_parse(int argc, char **argv, struct backend_options *opt);
/* --templates-dir, or <dir of the binary>/../templates (build/bin/ next to
 * build/templates/): a string to free, NULL when out of memory. */
char *options_templates_dir(const struct backend_options *opt);

#endif
