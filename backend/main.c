/* e2b-local-backend: wires the options, the state directory (locked) and
 * its layer store, the sandbox registry and the HTTP listeners
 * (control-plane API, the shared envd one and one envd listener per sandbox)
 * onto one libevent loop with the process manager, prints the ready line, and tears
 * everything down again on SIGTERM/SIGINT: every process group is killed
 * and reaped before the backend exits.
 *
 * Each part is a subsystem with an open and a close, listed in the table
 * subsystems[] in the order they open: main() opens them in turn, runs the
 * loop, and closes the opened ones in reverse, after a failed open as at
 * shutdown. An open that fails undoes what it did itself. Adding a part is
 * a pair of functions and one line of the table. The HTTP side's parts
 * (the connection tracker, each sandbox's envd port, the servers, their
 * listeners and the ready line) are serving.c's; what the parts share is
 * struct backend (backend.h). */
#include "backend.h"

#include "api/api_ctx.h"
#include "envd/envd_listener.h"
#include "envd/fs/fs_watch.h"
#include "envd/process/process_manager.h"
#include "envd/process/process_stream.h"
#include "metrics/metrics.h"
#include "lib/crashpoint.h"
#include "lib/err.h"
#include "lib/fd_limit.h"
#include "lib/mem_trim.h"
#include "net/net.h"
#include "net/net_egress.h"
#include "options.h"
#include "registry/registry.h"
#include "runtime/runtime_checkpoint.h"
#include "runtime/runtime_dynmods.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_rootless.h"
#include "runtime/runtime_seccomp.h"
#include "secrets/secrets.h"
#include "serving.h"
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

#include <errno.h>
#include <event2/event.h>
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

/* The egress proxy's way to a secret a transform rule names. */
static int secret_value(void *ctx, const char *name, char **value)
{
	*value = secrets_value(ctx, name);
	return *value ? 0 : -1;
}

/* The warm pool runs a built-in template's start command (warm.h) as a
 * create does (templates_start.h). */
static void *warm_start_begin(void *ctx, struct sandbox *sb, const void *start,
	void (*done)(void *arg, const struct err *err), void *arg)
{
	return templates_start_begin_pooled(ctx, sb, start, done, arg);
}

static void warm_start_abandon(void *handle)
{
	templates_start_abandon(handle);
}

static int state_dir_up(struct backend *b)
{
	return state_dir_open(&b->sd, b->opt.state_dir);
}

static void state_dir_down(struct backend *b)
{
	state_dir_close(&b->sd);
}

/* The loop, and its SIGTERM and SIGINT events (caught from the "signals"
 * step on, until the loop goes: a second one during shutdown changes
 * nothing). */
static int loop_up(struct backend *b)
{
	b->base = event_base_new();
	/* One level below everyone's for the warm pool's steps (warm.h). */
	if (b->base && event_base_priority_init(b->base, WARM_PRIORITY + 1) == 0) {
		b->sigterm = evsignal_new(b->base, SIGTERM, on_stop_signal, b->base);
		b->sigint = evsignal_new(b->base, SIGINT, on_stop_signal, b->base);
		return 0;
	}
	if (b->base)
		event_base_free(b->base);
	b->base = NULL;
	return -1;
}

static void loop_down(struct backend *b)
{
	if (b->sigterm)
		event_free(b->sigterm);
	if (b->sigint)
		event_free(b->sigint);
	event_base_free(b->base);
	libevent_global_shutdown(); /* lets leak checkers see a clean exit */
}

static int runtime_up(struct backend *b)
{
	char *templates = options_templates_dir(&b->opt);
	if (!templates || runtime_init(b->base, b->opt.isolation, templates, b->sd.root) != 0) {
		runtime_shutdown(); /* whatever runtime_init had made */
		free(templates);
		return -1;
	}
	free(templates);
	if (b->opt.cgroup_favor_dynmods && runtime_full() && runtime_migrates())
		runtime_dynmods_start(b->sd.root);
	runtime_checkpoint_probe(); /* whether pauses checkpoint (read when first needed) */
	return 0;
}

static void runtime_down(struct backend *b)
{
	(void)b;
	runtime_shutdown(); /* waits until every sandbox's directory, mount and cgroup is gone */
}

static int store_up(struct backend *b)
{
	return store_layers_init(b->base, b->sd.root);
}

static void store_down(struct backend *b)
{
	(void)b;
	store_layers_shutdown(); /* waits for the store's helpers (seals, deletions) */
}

static int net_up(struct backend *b)
{
	const struct backend_options *opt = &b->opt;
	/* Rootless sandboxes have loopback only: veths, forwarding and the
	 * nftables table need root in the machine's network namespace. */
	b->net_opt = (struct net_options){.subnet = opt->sandbox_subnet,
		.max_sandboxes = opt->max_sandboxes + opt->warm_pool * (1 + opt->warm_templates),
		.conn_limit = opt->sandbox_conn_limit,
		.off = !opt->sandbox_network || opt->isolation == ISOLATION_ROOTLESS,
		.egress_ca_dir = b->sd.owns_root ? NULL : b->sd.root,
		.egress_ca_file = opt->egress_ca_file};
	return net_init(b->base, &b->net_opt);
}

static void net_down(struct backend *b)
{
	(void)b;
	net_shutdown(); /* the table and the address claim, after every sandbox */
}

static int registry_up(struct backend *b)
{
	b->reg = registry_new(b->base, b->sd.sandboxes, b->opt.api_key);
	if (!b->reg)
		return backend_no_loop();
	/* A state directory of its own (--state-dir) outlives this process:
	 * its sandboxes are recorded there. A mkdtemp one dies with it. */
	if (!b->sd.owns_root)
		registry_persist(b->reg, b->sd.root);
	b->api_ctx = (struct api_ctx){.reg = b->reg,
		.api_key = b->opt.api_key,
		.connect_may_shorten = b->opt.connect_may_shorten,
		.max_sandboxes = (size_t)b->opt.max_sandboxes};
	return 0;
}

static void registry_down(struct backend *b)
{
	registry_free(b->reg); /* empty by now ("sandboxes") */
}

static int volumes_up(struct backend *b)
{
	b->volumes = volumes_open(b->sd.root, b->reg, b->opt.api_key, runtime_full(), !b->sd.owns_root);
	b->api_ctx.volumes = b->volumes;
	return b->volumes ? 0 : backend_no_loop();
}

static void volumes_down(struct backend *b)
{
	volumes_close(b->volumes); /* after the sandboxes that mounted them */
}

static int secrets_up(struct backend *b)
{
	/* Secrets last as long as the sandboxes' records do. */
	b->secrets = secrets_open(b->sd.owns_root ? NULL : b->sd.root);
	if (!b->secrets)
		return backend_no_loop();
	net_egress_set_secrets(secret_value, b->secrets); /* ${e2b.secrets.<name>} in transform rules */
	b->api_ctx.secrets = b->secrets;
	return 0;
}

static void secrets_down(struct backend *b)
{
	secrets_close(b->secrets);
}

static void templates_down(struct backend *b)
{
	templates_stack_shutdown();
	images_shutdown();
	templates_free_all(&b->catalog);
	templates_builtin_shutdown(); /* after the warm pools that point at them */
	templates_files_shutdown();
}

static int templates_up(struct backend *b)
{
	b->templates_env = (struct templates_env){.base = b->base,
		.reg = b->reg,
		.catalog = &b->catalog,
		.state_root = b->sd.root};
	b->api_ctx.templates = &b->templates_env;
	bool files_ok = templates_files_init(b->sd.root) == 0 && images_init(b->base, &b->opt.images) == 0;
	if (!files_ok)
		fprintf(stderr, "e2b-local-backend: cannot make the template files directory\n");
	/* The templates of earlier runs; then the layers none of them uses go. */
	if (files_ok && templates_records_load(b->sd.root, &b->catalog) < 0 && errno != ENOENT)
		fprintf(stderr, "e2b-local-backend: cannot read the templates' records: %s\n",
			strerror(errno));
	if (files_ok && templates_stack_init(b->base, &b->catalog, b->reg) != 0)
		files_ok = false;
	templates_stack_collect_soon();
	if (!files_ok) {
		templates_down(b);
		return backend_no_loop();
	}
	return 0;
}

static int processes_up(struct backend *b)
{
	b->pm = process_manager_new(b->base, process_stream_ops());
	b->templates_env.pm = b->pm;
	return b->pm ? 0 : backend_no_loop();
}

static void processes_down(struct backend *b)
{
	process_manager_free(b->pm); /* kills what is left, reaps every child */
}

static int watchers_up(struct backend *b)
{
	b->watchers = fs_watchers_new(b->base, b->reg, (size_t)b->opt.max_watches);
	return b->watchers ? 0 : backend_no_loop();
}

static void watchers_down(struct backend *b)
{
	fs_watchers_free(b->watchers); /* after the registry's removing hooks */
}

static int metrics_up(struct backend *b)
{
	b->metrics = metrics_new(b->base, b->reg, (int)b->opt.metrics_interval_s);
	return b->metrics ? 0 : backend_no_loop();
}

static void metrics_down(struct backend *b)
{
	metrics_free(b->metrics); /* after the registry's removing hooks */
}

static void sandboxes_down(struct backend *b)
{
	/* A sandbox's init ends only once the processes the backend forked into
	 * it are reaped, and the loop reaps no more: all killed (paused ones
	 * too) and reaped first, then each sandbox is stopped or removed. */
	registry_halt_all(b->reg);
	process_manager_reap(b->pm);
	registry_remove_all(b->reg);          /* kills every sandbox (SIGKILLs its processes) */
	snapshots_free(b->api_ctx.snapshots); /* after the registry's removing hooks */
}

/* The registry's hooks, the snapshots (whose hooks come last) and the
 * sandboxes of an earlier run. */
static int sandboxes_up(struct backend *b)
{
	/* Streams are cut before the processes behind them are killed. */
	struct registry_hooks port_hooks, watch_hooks, pm_hooks, net_hooks, metrics_hooks;
	struct registry_hooks build_hooks = {.ctx = &b->templates_env,
		.removing = templates_exec_sandbox_removing};
	envd_listeners_hooks(b->own_ports, &port_hooks);
	fs_watchers_hooks(b->watchers, &watch_hooks);
	process_manager_registry_hooks(b->pm, &pm_hooks);
	net_registry_hooks(&net_hooks);
	metrics_registry_hooks(b->metrics, &metrics_hooks);
	registry_add_hooks(b->reg, &port_hooks);
	registry_add_hooks(b->reg, &watch_hooks);
	registry_add_hooks(b->reg, &pm_hooks);
	registry_add_hooks(b->reg, &net_hooks);
	registry_add_hooks(b->reg, &metrics_hooks);
	registry_add_hooks(b->reg, &build_hooks);
	b->api_ctx.snapshots = snapshots_new(b->base, b->reg, b->sd.root, !b->sd.owns_root);
	size_t kept = registry_restore(b->reg);
	if (b->api_ctx.snapshots) {
		snapshots_collect(b->api_ctx.snapshots); /* what a crash left unused */
		templates_stack_add_keeper(snapshots_keep_layers, b->api_ctx.snapshots);
	}
	if (kept > 0)
		fprintf(stderr,
			"e2b-local-backend: %zu sandbox%s of an earlier run brought back "
			"paused\n",
			kept, kept == 1 ? "" : "es");
	if (!b->api_ctx.snapshots) {
		sandboxes_down(b);
		return backend_no_loop();
	}
	return 0;
}

/* The SDK's default template with the default resources, filled from the
 * first pass of the loop, behind any request. */
static int warm_up(struct backend *b)
{
	b->warm_shape = (struct sandbox_spec){.template_id = "base",
		.cpu_count = SANDBOX_DEFAULT_CPU_COUNT,
		.memory_mb = SANDBOX_DEFAULT_MEMORY_MB,
		.disk_size_mb = SANDBOX_DEFAULT_DISK_SIZE_MB,
		.timeout_s = 1};
	b->api_ctx.warm = warm_new(b->base, b->reg, &b->warm_shape, (size_t)b->opt.warm_pool,
		(size_t)b->opt.warm_templates, b->opt.warm_template_idle_s);
	if (b->api_ctx.warm) {
		templates_stack_add_keeper(warm_keep_layers, b->api_ctx.warm);
		struct warm_starter starter = {.ctx = &b->templates_env,
			.begin = warm_start_begin,
			.abandon = warm_start_abandon};
		warm_set_starter(b->api_ctx.warm, &starter);
	}
	return 0; /* without one, every create starts its sandbox */
}

static void warm_down(struct backend *b)
{
	warm_free(b->api_ctx.warm); /* nobody's sandboxes, before the registry */
}

/* At shutdown, what runs off the requests ends once their clients are
 * gone, before the sandboxes it uses. */
static void work_down(struct backend *b)
{
	images_cancel_all();                        /* pulls are killed, not waited for */
	templates_exec_shutdown(&b->templates_env); /* running builds end, their sandboxes go */
	/* Seals in progress finish while the registry and the snapshots they
	 * report to still exist (their clients are gone with the listener). */
	store_helper_wait_all();
}

/* Signals first, so a SIGTERM sent right after the ready line is handled. */
static int signals_up(struct backend *b)
{
	if (!b->sigint || event_add(b->sigterm, NULL) != 0 || event_add(b->sigint, NULL) != 0)
		return backend_no_loop();
	return 0;
}

static int mem_trim_up(struct backend *b)
{
	mem_trim_init(b->base); /* out of memory: nothing is trimmed, nothing else changes */
	return 0;
}

static void mem_trim_down(struct backend *b)
{
	(void)b;
	mem_trim_shutdown();
}

/* In the order they open; they close in reverse. Either may be NULL. */
static const struct subsystem {
	const char *name;
	int (*open)(struct backend *b); /* 0, or -1 with what it made undone */
	void (*close)(struct backend *b);
} subsystems[] = {
	{"state directory", state_dir_up, state_dir_down},
	{"event loop", loop_up, loop_down},
	{"runtime", runtime_up, runtime_down},
	{"layer store", store_up, store_down},
	{"network", net_up, net_down},
	{"registry", registry_up, registry_down},
	{"volumes", volumes_up, volumes_down},
	{"secrets", secrets_up, secrets_down},
	{"templates", templates_up, templates_down},
	{"process manager", processes_up, processes_down},
	{"watchers", watchers_up, watchers_down},
	{"connections", serving_connections_up, serving_connections_down},
	{"envd ports", serving_envd_ports_up, serving_envd_ports_down},
	{"metrics", metrics_up, metrics_down},
	{"sandboxes", sandboxes_up, sandboxes_down},
	{"warm pool", warm_up, warm_down},
	{"work in flight", NULL, work_down},
	{"servers", serving_servers_up, serving_servers_down},
	{"signals", signals_up, NULL},          /* caught until the loop goes */
	{"listeners", serving_listen_up, NULL}, /* they go with their servers */
	{"memory trim", mem_trim_up, mem_trim_down},
};
#define N_SUBSYSTEMS (sizeof subsystems / sizeof subsystems[0])

int main(int argc, char **argv)
{
	crashpoint_init(); /* tests only: E2B_LOCAL_CRASH_AT */
	static struct backend b;
	switch (options_parse(argc, argv, &b.opt)) {
	case OPTIONS_OK:
		break;
	case OPTIONS_EXIT_OK:
		return 0;
	case OPTIONS_EXIT_USAGE:
		return 2;
	}
	fd_limit_raise(); /* before anything counts descriptors (--max-connections) */
	struct err why;
	if (runtime_ids_configure(b.opt.id_range, &why) != 0) {
		fprintf(stderr, "e2b-local-backend: %s\n", why.msg);
		return 2;
	}
	/* First: rootless, the backend continues in namespaces of its own (as
	 * a child; the process started here only forwards signals). */
	if (runtime_rootless_prepare(&b.opt.isolation) != 0)
		return 1;
	/* A client that hangs up mid-answer must not kill the server. */
	signal(SIGPIPE, SIG_IGN);

	size_t opened = 0;
	while (opened < N_SUBSYSTEMS && (!subsystems[opened].open || subsystems[opened].open(&b) == 0))
		opened++;
	int rc = 1;
	if (opened == N_SUBSYSTEMS) {
		event_base_dispatch(b.base);
		rc = 0;
	}
	while (opened-- > 0)
		if (subsystems[opened].close)
			subsystems[opened].close(&b);
	return rc;
}
