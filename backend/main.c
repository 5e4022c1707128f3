/* e2b-local-backend: wires the options, the state directory (locked) and
 * its layer store, the sandbox registry and the HTTP listeners
 * (control-plane API, the shared envd one and one envd listener per sandbox)
 * onto one libevent loop with the process manager, prints the ready line, and tears
 * everything down again on SIGTERM/SIGINT: every process group is killed
 * and reaped before the backend exits. */
#include "api/api_ctx.h"
#include "api/api_routes.h"
#include "api/api_sandboxes.h"
#include "envd/envd_listener.h"
#include "envd/envd_port_proxy.h"
#include "envd/fs/fs_list.h"
#include "envd/fs/fs_watch.h"
#include "envd/process/process_manager.h"
#include "envd/process/process_stream.h"
#include "http/http_conns.h"
#include "http/http_server.h"
#include "metrics/metrics.h"
#include "lib/crashpoint.h"
#include "lib/fd_limit.h"
#include "lib/mem_trim.h"
#include "net/net.h"
#include "net/net_egress.h"
#include "options.h"
#include "registry/registry.h"
#include "runtime/runtime_dynmods.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_rootless.h"
#include "runtime/runtime_seccomp.h"
#include "secrets/secrets.h"
#include "snapshots/snapshots.h"
#include "state_dir.h"
#include "images/images.h"
#include "store/store_helper.h"
#include "store/store_layers.h"
#include "templates/templates.h"
#include "templates/templates_builtin_cmds.h"
#include "templates/templates_exec.h"
#include "templates/templates_files.h"
#include "templates/templates_records.h"
#include "templates/templates_stack.h"
#include "templates/templates_start.h"
#include "volumes/volumes.h"
#include "warm/warm.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/http.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	fprintf(stderr, "e2b-local-backend: signal %d, shutting down\n", (int)sig);
	event_base_loopbreak(arg);
}

/* The single stdout line test harnesses wait for. */
static int print_ready_line(const char *api_url, const char *sandbox_url, const char *state_dir,
	const char *domain)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return -1;
	cJSON_AddStringToObject(o, "api_url", api_url);
	cJSON_AddStringToObject(o, "sandbox_url", sandbox_url);
	cJSON_AddStringToObject(o, "state_dir", state_dir);
	cJSON_AddNumberToObject(o, "pid", (double)runtime_host_pid());
	api_isolation_fields(o);
	/* Where the sandboxes' cgroups are made (for the operator; /health,
	 * open to anyone who reaches it, names no host path). */
	const char *cgroups = runtime_cgroup_sandboxes();
	if (cgroups)
		cJSON_AddStringToObject(o, "cgroup_parent", cgroups);
	cJSON_AddStringToObject(o, "domain", domain);
	char *line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!line)
		return -1;
	printf("%s\n", line);
	fflush(stdout);
	cJSON_free(line);
	return 0;
}

/* <dir of the binary>/../templates: build/bin/ next to build/templates/. */
/* The egress proxy's way to a secret a transform rule names. */
static int secret_value(void *ctx, const char *name, char **value)
{
	*value = secrets_value(ctx, name);
	return *value ? 0 : -1;
}

/* The warm pool runs a built-in template's start command (warm.h) as a
 * create does (templates_start.h). */
static void *warm_start_begin(void *ctx, struct sandbox *sb, const void *start,
	void (*done)(void *arg, const char *error), void *arg)
{
	return templates_start_begin_pooled(ctx, sb, start, done, arg);
}

static void warm_start_abandon(void *handle)
{
	templates_start_abandon(handle);
}

static char *default_templates_dir(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
	if (n <= 0)
		return strdup("templates");
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		strcpy(slash + 1, "templates");
	return strdup(exe);
}

int main(int argc, char **argv)
{
	crashpoint_init(); /* tests only: E2B_LOCAL_CRASH_AT */
	struct backend_options opt;
	switch (options_parse(argc, argv, &opt)) {
	case OPTIONS_OK: break;
	case OPTIONS_EXIT_OK: return 0;
	case OPTIONS_EXIT_USAGE: return 2;
	}
	fd_limit_raise(); /* before anything counts descriptors (--max-connections) */
	char why[256];
	if (runtime_ids_configure(opt.id_range, why, sizeof why) != 0) {
		fprintf(stderr, "e2b-local-backend: %s\n", why);
		return 2;
	}
	/* First: rootless, the backend continues in namespaces of its own (as
	 * a child; the process started here only forwards signals). */
	if (runtime_rootless_prepare(&opt.isolation) != 0)
		return 1;
	/* A client that hangs up mid-answer must not kill the server. */
	signal(SIGPIPE, SIG_IGN);

	int rc = 1;
	struct state_dir sd;
	if (state_dir_open(&sd, opt.state_dir) != 0)
		return 1;

	struct event_base *base = event_base_new();
	/* One level below everyone's for the warm pool's steps (warm.h). */
	if (base && event_base_priority_init(base, WARM_PRIORITY + 1) != 0) {
		event_base_free(base);
		base = NULL;
	}
	char *templates = opt.templates_dir ? strdup(opt.templates_dir) : default_templates_dir();
	if (!base || !templates || runtime_init(base, opt.isolation, templates, sd.root) != 0) {
		runtime_shutdown(); /* whatever runtime_init had made */
		free(templates);
		if (base)
			event_base_free(base);
		state_dir_close(&sd);
		return 1;
	}
	free(templates);
	if (opt.cgroup_favor_dynmods && runtime_full() && runtime_migrates())
		runtime_dynmods_start(sd.root);
	if (store_layers_init(base, sd.root) != 0) {
		runtime_shutdown();
		event_base_free(base);
		state_dir_close(&sd);
		return 1;
	}
	/* Rootless sandboxes have loopback only: veths, forwarding and the
	 * nftables table need root in the machine's network namespace. */
	struct net_options net_opt = {.subnet = opt.sandbox_subnet, .max_sandboxes = opt.max_sandboxes +
		opt.warm_pool * (1 + opt.warm_templates),
		.conn_limit = opt.sandbox_conn_limit,
		.off = !opt.sandbox_network || opt.isolation == ISOLATION_ROOTLESS,
		.egress_ca_dir = sd.owns_root ? NULL : sd.root, .egress_ca_file = opt.egress_ca_file};
	if (net_init(base, &net_opt) != 0) {
		store_layers_shutdown();
		runtime_shutdown();
		event_base_free(base);
		state_dir_close(&sd);
		return 1;
	}
	struct registry *reg = registry_new(base, sd.sandboxes, opt.api_key);
	/* A state directory of its own (--state-dir) outlives this process:
	 * its sandboxes are recorded there. A mkdtemp one dies with it. */
	if (reg && !sd.owns_root)
		registry_persist(reg, sd.root);
	struct volumes *volumes = reg ? volumes_open(sd.root, reg, opt.api_key,
		runtime_full(), !sd.owns_root) : NULL;
	/* Secrets last as long as the sandboxes' records do. */
	struct secrets *secrets = volumes ? secrets_open(sd.owns_root ? NULL : sd.root) : NULL;
	if (secrets)
		net_egress_set_secrets(secret_value, secrets); /* ${e2b.secrets.<name>} in transform rules */
	struct proc_manager *pm = secrets ? process_manager_new(base, process_stream_ops()) : NULL;
	struct api_ctx api_ctx = {.reg = reg, .api_key = opt.api_key,
		.connect_may_shorten = opt.connect_may_shorten,
		.max_sandboxes = (size_t)opt.max_sandboxes, .volumes = volumes, .secrets = secrets};
	struct templates catalog = {0};
	struct templates_env templates_env = {.base = base, .reg = reg, .pm = pm, .catalog = &catalog,
		.state_root = sd.root};
	api_ctx.templates = &templates_env;
	bool files_ok = templates_files_init(sd.root) == 0 && images_init(base, &opt.images) == 0;
	if (!files_ok)
		fprintf(stderr, "e2b-local-backend: cannot make the template files directory\n");
	/* The templates of earlier runs; then the layers none of them uses go. */
	if (files_ok && templates_records_load(sd.root, &catalog) < 0 && errno != ENOENT)
		fprintf(stderr, "e2b-local-backend: cannot read the templates' records: %s\n", strerror(errno));
	if (files_ok && (!reg || templates_stack_init(base, &catalog, reg) != 0))
		files_ok = false;
	templates_stack_collect_soon();
	struct fs_watchers *watchers = pm && files_ok ? fs_watchers_new(base, reg, (size_t)opt.max_watches) : NULL;
	struct envd_ctx envd_ctx = {.reg = reg, .process_manager = pm, .base = base,
		.watchers = watchers, .max_upload_bytes = (uint64_t)opt.max_upload_mb << 20,
		.proxy_idle_timeout_s = opt.proxy_idle_timeout_s, .wake = api_sandboxes_wake, .wake_ctx = &api_ctx};
	struct http_conns_limits limits = {.max_connections = (size_t)opt.max_connections,
		.request_timeout_s = opt.request_timeout_s,
		.per_sandbox = (size_t)opt.max_sandbox_requests};
	struct http_conns *conns = watchers ? http_conns_new(base, &limits) : NULL;
	struct envd_listeners *own_ports = conns ? envd_listeners_new(&envd_ctx, conns, opt.envd.host)
		: NULL;
	struct metrics *metrics = own_ports ? metrics_new(base, reg, (int)opt.metrics_interval_s) : NULL;
	if (metrics) {
		/* Streams are cut before the processes behind them are killed. */
		struct registry_hooks port_hooks, watch_hooks, pm_hooks, net_hooks, metrics_hooks;
		struct registry_hooks build_hooks = {.ctx = &templates_env,
			.removing = templates_exec_sandbox_removing};
		envd_listeners_hooks(own_ports, &port_hooks);
		fs_watchers_hooks(watchers, &watch_hooks);
		process_manager_registry_hooks(pm, &pm_hooks);
		net_registry_hooks(&net_hooks);
		metrics_registry_hooks(metrics, &metrics_hooks);
		registry_add_hooks(reg, &port_hooks);
		registry_add_hooks(reg, &watch_hooks);
		registry_add_hooks(reg, &pm_hooks);
		registry_add_hooks(reg, &net_hooks);
		registry_add_hooks(reg, &metrics_hooks);
		registry_add_hooks(reg, &build_hooks);
		api_ctx.snapshots = snapshots_new(base, reg, sd.root, !sd.owns_root);
		size_t kept = registry_restore(reg);
		if (api_ctx.snapshots) {
			snapshots_collect(api_ctx.snapshots); /* what a crash left unused */
			templates_stack_add_keeper(snapshots_keep_layers, api_ctx.snapshots);
		}
		if (kept > 0)
			fprintf(stderr, "e2b-local-backend: %zu sandbox%s of an earlier run brought back "
				"paused\n", kept, kept == 1 ? "" : "es");
	}
	struct evhttp *api = metrics && api_ctx.snapshots ? http_server_new(base, conns, HTTP_POOL_API,
		api_dispatch, api_verdict, &api_ctx) : NULL;
	struct evhttp *envd = api ? http_server_new(base, conns, HTTP_POOL_ENVD, envd_dispatch,
		envd_verdict, &envd_ctx) : NULL;
	/* Signals first, so a SIGTERM sent right after the ready line is handled. */
	struct event *sigterm = envd ? evsignal_new(base, SIGTERM, on_stop_signal, base) : NULL;
	struct event *sigint = sigterm ? evsignal_new(base, SIGINT, on_stop_signal, base) : NULL;
	if (!sigint || event_add(sigterm, NULL) != 0 || event_add(sigint, NULL) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot set up the event loop\n");
		goto out;
	}

	uint16_t api_port, envd_port;
	if (http_server_bind(api, conns, HTTP_POOL_API, opt.api.host, opt.api.port, &api_port,
		    NULL) != 0 ||
	    http_server_bind(envd, conns, HTTP_POOL_ENVD, opt.envd.host, opt.envd.port, &envd_port,
		    NULL) != 0)
		goto out;
	char api_url[96], sandbox_url[96], domain[256];
	http_server_url(opt.api.host, api_port, api_url, sizeof api_url);
	http_server_url(opt.envd.host, envd_port, sandbox_url, sizeof sandbox_url);
	/* Browsers resolve *.localhost to loopback: <port>-<id>.localhost:<envd
	 * port> reaches the envd listener, which routes by that Host. */
	if (opt.domain)
		snprintf(domain, sizeof domain, "%s", opt.domain);
	else
		snprintf(domain, sizeof domain, "localhost:%u", (unsigned)envd_port);
	api_ctx.domain = domain;
	/* The SDK's default template with the default resources; filled from
	 * the first pass of the loop, behind any request. */
	struct sandbox_spec warm_shape = {.template_id = "base",
		.cpu_count = SANDBOX_DEFAULT_CPU_COUNT, .memory_mb = SANDBOX_DEFAULT_MEMORY_MB,
		.disk_size_mb = SANDBOX_DEFAULT_DISK_SIZE_MB, .timeout_s = 1};
	api_ctx.warm = warm_new(base, reg, &warm_shape, (size_t)opt.warm_pool, (size_t)opt.warm_templates,
		opt.warm_template_idle_s);
	if (api_ctx.warm) {
		templates_stack_add_keeper(warm_keep_layers, api_ctx.warm);
		struct warm_starter starter = {.ctx = &templates_env, .begin = warm_start_begin,
			.abandon = warm_start_abandon};
		warm_set_starter(api_ctx.warm, &starter);
	}
	fprintf(stderr, "e2b-local-backend: api %s, envd %s, state %s, at most %zu connections "
		"(%zu of them for the API only)\n", api_url, sandbox_url, sd.root,
		http_conns_max(conns), http_conns_api_reserve(conns));
	if (print_ready_line(api_url, sandbox_url, sd.root, domain) != 0)
		goto out;

	mem_trim_init(base); /* out of memory: nothing is trimmed, nothing else changes */
	event_base_dispatch(base);
	rc = 0;

out:
	if (api)
		http_server_free(conns, api);
	port_proxy_shutdown();    /* before the listener frees the connections it took over */
	fs_list_shutdown();       /* listings in progress, before their connections go */
	if (envd)
		http_server_free(conns, envd); /* open process streams are detached here */
	envd_listeners_close_all(own_ports); /* likewise, each sandbox's own port */
	http_conns_free(conns);   /* after every connection is gone */
	images_cancel_all(); /* pulls are killed, not waited for */
	templates_exec_shutdown(&templates_env); /* running builds end, their sandboxes go */
	/* Seals in progress finish while the registry and the snapshots they
	 * report to still exist (their clients are gone with the listener). */
	store_helper_wait_all();
	warm_free(api_ctx.warm);  /* nobody's sandboxes, before the registry */
	/* A sandbox's init ends only once the processes the backend forked into
	 * it are reaped, and the loop reaps no more: all killed (paused ones
	 * too) and reaped first, then each sandbox is stopped or removed. */
	registry_halt_all(reg);
	process_manager_reap(pm);
	registry_free(reg);       /* kills every sandbox (SIGKILLs its processes) */
	volumes_close(volumes);   /* after the sandboxes that mounted them */
	secrets_close(secrets);
	snapshots_free(api_ctx.snapshots); /* after the registry's removing hooks */
	fs_watchers_free(watchers); /* after the registry's removing hooks */
	envd_listeners_free(own_ports); /* after the registry's removing hooks */
	metrics_free(metrics);    /* likewise */
	process_manager_free(pm);    /* kills what is left, reaps every child */
	net_shutdown();           /* the table and the address claim, after every sandbox */
	store_layers_shutdown();  /* waits for the store's helpers (seals, deletions) */
	runtime_shutdown();       /* waits until every sandbox's directory, mount and cgroup is gone */
	templates_stack_shutdown();
	images_shutdown();
	templates_free_all(&catalog);
	templates_builtin_shutdown(); /* after the warm pools that point at them */
	templates_files_shutdown();
	if (sigterm)
		event_free(sigterm);
	if (sigint)
		event_free(sigint);
	mem_trim_shutdown();
	if (base)
		event_base_free(base);
	libevent_global_shutdown(); /* lets leak checkers see a clean exit */
	state_dir_close(&sd);
	return rc;
}
