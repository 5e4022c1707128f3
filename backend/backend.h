/* The state of the program (main.c): everything its subsystems open, and
 * what they hand each other. Each subsystem is an open and a close on it
 * (main.c; the HTTP side's in serving.c). It declares no functions. */
#ifndef E2B_BACKEND_BACKEND_H
#define E2B_BACKEND_BACKEND_H

#include "api/api_ctx.h"
#include "envd/envd_routes.h"
#include "http/http_conns.h"
#include "net/net.h"
#include "options.h"
#include "registry/registry.h"
#include "state_dir.h"
#include "templates/templates.h"
#include "templates/templates_exec.h"

#include <stdio.h>

struct envd_listeners;
struct event;
struct event_base;
struct evhttp;
struct fs_watchers;
struct metrics;
struct proc_manager;
struct secrets;
struct volumes;

/* Everything the subsystems open, and what they hand each other. */
struct backend {
	struct backend_options opt;
	struct state_dir sd;
	struct event_base *base;
	struct event *sigterm, *sigint;
	struct net_options net_opt;
	struct registry *reg;
	struct volumes *volumes;
	struct secrets *secrets;
	struct templates catalog;
	struct templates_env templates_env;
	struct proc_manager *pm;
	struct fs_watchers *watchers;
	struct http_conns_limits limits;
	struct http_conns *conns;
	struct envd_ctx envd_ctx;
	struct envd_listeners *own_ports;
	struct metrics *metrics;
	struct api_ctx api_ctx;
	struct sandbox_spec warm_shape;
	struct evhttp *api, *envd;
	char api_url[96], sandbox_url[96], domain[256];
};

/* What an open that could not make its part prints (out of memory, the
 * loop's limits). */
static inline int backend_no_loop(void)
{
	fprintf(stderr, "e2b-local-backend: cannot set up the event loop\n");
	return -1;
}

#endif
