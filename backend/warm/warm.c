/* The warm pool (warm.h). */
#include "warm/warm.h"

#include "lib/worker.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_ids.h"

#include <cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fewer id ranges than this: no pool (warm.h). */
#define WARM_MIN_RANGES 64
#define WARM_BACKOFF_MIN_MS 100
#define WARM_BACKOFF_MAX_MS 30000
/* The worker's CPU priority: below the loop and the sandboxes in use. */
#define WARM_WORKER_NICE 10

struct warm {
	struct event_base *base;
	struct registry *reg;
	struct sandbox_spec shape;
	char *template_id;
	size_t size;
	struct sandbox **ready;   /* started, attached, nobody's: taken from the end */
	size_t nready;
	struct sandbox *starting; /* launched; its init has not reported yet */
	struct event *launch, *report, *attach;
	struct worker *worker;    /* runs the long steps (worker.h) */
	int built;                /* runtime_sandbox_build's result, and its error */
	struct runtime_error build_err;
	struct net_attach *linking; /* net_sandbox_attach's middle part in progress */
	bool closing;             /* warm_free: a step that ends only cleans up */
	unsigned failures;        /* in a row: the back-off, one log line per streak */
};

static void schedule(struct warm *w, long delay_ms)
{
	if (w->starting || w->nready >= w->size || evtimer_pending(w->launch, NULL))
		return;
	struct timeval tv = {.tv_sec = delay_ms / 1000, .tv_usec = (delay_ms % 1000) * 1000};
	evtimer_add(w->launch, &tv);
}

static void failed(struct warm *w, const char *why)
{
	if (w->starting) {
		registry_discard(w->reg, w->starting);
		w->starting = NULL;
	}
	if (w->failures++ == 0)
		fprintf(stderr, "e2b-local-backend: cannot start a warm sandbox (retrying): %s\n", why);
	long delay = WARM_BACKOFF_MIN_MS;
	for (unsigned i = 1; i < w->failures && delay < WARM_BACKOFF_MAX_MS; i++)
		delay *= 2;
	schedule(w, delay < WARM_BACKOFF_MAX_MS ? delay : WARM_BACKOFF_MAX_MS);
}

static void ready(struct warm *w)
{
	w->ready[w->nready++] = w->starting;
	w->starting = NULL;
	w->failures = 0;
	schedule(w, 0);
}

/* Step 3, on the worker: its link, relay sockets and resolv.conf. */
static void link_work(void *arg)
{
	struct warm *w = arg;
	net_sandbox_attach_work(w->linking);
}

/* Step 3, back on the loop: its relay and (open) rules; then it is ready. */
static void link_done(void *arg)
{
	struct warm *w = arg;
	char why[256];
	int rc = net_sandbox_attach_end(w->linking, why, sizeof why);
	w->linking = NULL;
	if (w->closing)
		return;
	if (rc != 0)
		failed(w, why);
	else
		ready(w);
}

/* Step 3: its address and network; the link is made on the worker. */
static void on_attach(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	char why[256];
	struct net_policy open;
	if (net_policy_parse(NULL, NULL, -1, &open, why, sizeof why) != 0 ||
	    net_sandbox_attach_begin(w->starting, &open, &w->linking, why, sizeof why) != 0) {
		failed(w, why);
		return;
	}
	if (!w->linking)
		ready(w); /* no networking */
	else if (worker_run(w->worker, link_work, link_done, w) != 0)
		link_done(w); /* cannot be: one step at a time */
}

/* Step 2: the init said how its start went. */
static void on_report(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	struct runtime_error err;
	if (runtime_sandbox_await(w->starting, &err) != 0) {
		failed(w, err.message);
		return;
	}
	event_active(w->attach, 0, 0);
}

/* Step 1, on the worker: cgroups, overlay and the init's clone. */
static void build_work(void *arg)
{
	struct warm *w = arg;
	w->built = runtime_sandbox_build(w->starting, &w->build_err);
}

/* Step 1, back on the loop: its init is let go. */
static void build_done(void *arg)
{
	struct warm *w = arg;
	if (w->closing)
		return;
	if (w->built != 0) {
		failed(w, w->build_err.message);
		return;
	}
	runtime_sandbox_setup_in_background(w->starting);
	int report = runtime_sandbox_report_fd(w->starting);
	if (report < 0) {
		event_active(w->attach, 0, 0);
		return;
	}
	/* event_assign forgets the priority: set it again for each pipe. */
	if (event_assign(w->report, w->base, report, EV_READ, on_report, w) != 0 ||
	    event_priority_set(w->report, WARM_PRIORITY) != 0 || event_add(w->report, NULL) != 0)
		failed(w, "cannot watch its init");
}

/* Step 1: what a create checks, its id range and disk; the rest on the worker. */
static void on_launch(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	struct runtime_error err;
	/* What a create checks first (the template, free disk space). */
	if (runtime_check_create(w->shape.template_id, w->shape.cpu_count, w->shape.memory_mb,
		    w->shape.disk_size_mb, &err) != 0) {
		failed(w, err.message);
		return;
	}
	w->starting = registry_launch_reserved(w->reg, &w->shape, &err);
	if (!w->starting) {
		failed(w, err.message);
		return;
	}
	if (worker_run(w->worker, build_work, build_done, w) != 0) {
		w->built = -1;
		snprintf(w->build_err.message, sizeof w->build_err.message, "its worker is busy");
		build_done(w); /* cannot be: one step at a time */
	}
}

struct warm *warm_new(struct event_base *base, struct registry *reg, const struct sandbox_spec *shape,
	size_t size)
{
	/* A small --id-range is for few sandboxes: the pool would hold them. */
	if (size == 0 || !runtime_isolated() || runtime_ids_ranges() < WARM_MIN_RANGES)
		return NULL;
	struct warm *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->base = base;
	w->reg = reg;
	w->size = size;
	w->shape = *shape;
	w->shape.template_id = w->template_id = strdup(shape->template_id);
	w->shape.layers = NULL;
	w->shape.layer_count = 0;
	w->shape.volume_mounts = w->shape.metadata = w->shape.env_vars = w->shape.asked_network = NULL;
	w->ready = calloc(size, sizeof *w->ready);
	w->launch = evtimer_new(base, on_launch, w);
	w->report = event_new(base, -1, 0, NULL, NULL);
	w->attach = evtimer_new(base, on_attach, w);
	w->worker = worker_new(base, WARM_PRIORITY, WARM_WORKER_NICE);
	if (!w->template_id || !w->ready || !w->launch || !w->report || !w->attach || !w->worker ||
	    event_priority_set(w->launch, WARM_PRIORITY) != 0 ||
	    event_priority_set(w->attach, WARM_PRIORITY) != 0) {
		warm_free(w);
		return NULL;
	}
	schedule(w, 0);
	return w;
}

static bool fits(const struct warm *w, const struct sandbox_spec *spec)
{
	return strcmp(spec->template_id, w->shape.template_id) == 0 && spec->layer_count == 0 &&
		cJSON_GetArraySize(spec->volume_mounts) == 0 && spec->cpu_count == w->shape.cpu_count &&
		spec->memory_mb == w->shape.memory_mb && spec->disk_size_mb == w->shape.disk_size_mb;
}

struct sandbox *warm_take(struct warm *w, const struct sandbox_spec *spec)
{
	if (!w || w->nready == 0 || !fits(w, spec))
		return NULL;
	struct sandbox *sb = w->ready[--w->nready];
	schedule(w, 0);
	return sb;
}

size_t warm_ready(const struct warm *w)
{
	return w ? w->nready : 0;
}

size_t warm_size(const struct warm *w)
{
	return w ? w->size : 0;
}

void warm_free(struct warm *w)
{
	if (!w)
		return;
	w->closing = true;
	worker_free(w->worker); /* the step in progress ends first */
	if (w->launch)
		event_free(w->launch);
	if (w->report)
		event_free(w->report);
	if (w->attach)
		event_free(w->attach);
	if (w->starting)
		registry_discard(w->reg, w->starting);
	while (w->ready && w->nready > 0)
		registry_discard(w->reg, w->ready[--w->nready]);
	free(w->ready);
	free(w->template_id);
	free(w);
}
