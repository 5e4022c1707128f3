/* The HTTP side of the program (serving.h). */
#include "serving.h"

#include "backend.h"
#include "api/api_routes.h"
#include "api/api_sandboxes.h"
#include "envd/envd_listener.h"
#include "envd/envd_port_proxy.h"
#include "envd/fs/fs_list.h"
#include "http/http_server.h"
#include "runtime/runtime.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>

int serving_connections_up(struct backend *b)
{
	b->limits = (struct http_conns_limits){.max_connections = (size_t)b->opt.max_connections,
		.request_timeout_s = b->opt.request_timeout_s,
		.per_sandbox = (size_t)b->opt.max_sandbox_requests};
	b->conns = http_conns_new(b->base, &b->limits);
	return b->conns ? 0 : backend_no_loop();
}

void serving_connections_down(struct backend *b)
{
	http_conns_free(b->conns); /* after every connection is gone */
}

int serving_envd_ports_up(struct backend *b)
{
	b->envd_ctx = (struct envd_ctx){.reg = b->reg,
		.process_manager = b->pm,
		.base = b->base,
		.fs = {.reg = b->reg,
			.base = b->base,
			.watchers = b->watchers,
			.max_upload_bytes = (uint64_t)b->opt.max_upload_mb << 20},
		.proxy_idle_timeout_s = b->opt.proxy_idle_timeout_s,
		.wake = api_sandboxes_wake,
		.wake_ctx = &b->api_ctx};
	b->own_ports = envd_listeners_new(&b->envd_ctx, b->conns, b->opt.envd.host);
	return b->own_ports ? 0 : backend_no_loop();
}

void serving_envd_ports_down(struct backend *b)
{
	envd_listeners_free(b->own_ports); /* after the registry's removing hooks */
}

void serving_servers_down(struct backend *b)
{
	if (b->api)
		http_server_free(b->conns, b->api);
	port_proxy_shutdown(); /* before the listener frees the connections it took over */
	fs_list_shutdown();    /* listings in progress, before their connections go */
	if (b->envd)
		http_server_free(b->conns, b->envd); /* open process streams are detached here */
	envd_listeners_close_all(b->own_ports);      /* likewise, each sandbox's own port */
}

int serving_servers_up(struct backend *b)
{
	b->api = http_server_new(b->base, b->conns, HTTP_POOL_API, api_dispatch, api_verdict, &b->api_ctx);
	b->envd = b->api ? http_server_new(b->base, b->conns, HTTP_POOL_ENVD, envd_dispatch, envd_verdict,
				   &b->envd_ctx)
			 : NULL;
	if (!b->envd) {
		serving_servers_down(b);
		return backend_no_loop();
	}
	return 0;
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

int serving_listen_up(struct backend *b)
{
	const struct backend_options *opt = &b->opt;
	uint16_t api_port, envd_port;
	if (http_server_bind(b->api, b->conns, HTTP_POOL_API, opt->api.host, opt->api.port, &api_port,
		    NULL) != 0 ||
		http_server_bind(b->envd, b->conns, HTTP_POOL_ENVD, opt->envd.host, opt->envd.port,
			&envd_port, NULL) != 0)
		return -1;
	http_server_url(opt->api.host, api_port, b->api_url, sizeof b->api_url);
	http_server_url(opt->envd.host, envd_port, b->sandbox_url, sizeof b->sandbox_url);
	/* Browsers resolve *.localhost to loopback: <port>-<id>.localhost:<envd
	 * port> reaches the envd listener, which routes by that Host. */
	if (opt->domain)
		snprintf(b->domain, sizeof b->domain, "%s", opt->domain);
	else
		snprintf(b->domain, sizeof b->domain, "localhost:%u", (unsigned)envd_port);
	b->api_ctx.domain = b->domain;
	fprintf(stderr,
		"e2b-local-backend: api %s, envd %s, state %s, at most %zu connections "
		"(%zu of them for the API only)\n",
		b->api_url, b->sandbox_url, b->sd.root, http_conns_max(b->conns),
		http_conns_api_reserve(b->conns));
	return print_ready_line(b->api_url, b->sandbox_url, b->sd.root, b->domain);
}
