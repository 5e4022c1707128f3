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

/* Sandboxes being made at once: one on the worker (cgroups, overlay, clone,
 * or its link) while the other's init mounts its root in its own process. */
#define WARM_IN_FLIGHT 2

/* One sandbox being made: worker build, then its init's report, then the
 * worker's link, then ready. */
struct warming {
	struct warm *w;
	struct sandbox *sb;       /* NULL: the slot is free */
	struct event *report;     /* its init's report pipe */
	int built;                /* runtime_sandbox_build's result, and its error */
	struct runtime_error build_err;
	struct net_attach *linking; /* net_sandbox_attach's middle part */
	bool wants_link;          /* its init reported: the worker links it next */
};

struct warm {
	struct event_base *base;
	struct registry *reg;
	struct sandbox_spec shape;
	char *template_id;
	size_t size;
	struct sandbox **ready;   /* started, attached, nobody's: taken from the end */
	size_t nready;
	struct warming flight[WARM_IN_FLIGHT];
	size_t nflight;
	struct event *launch;
	struct worker *worker;    /* runs the long steps, one at a time (worker.h) */
	bool worker_busy;
	bool closing;             /* warm_free: a step that ends only cleans up */
	unsigned failures;        /* in a row: the back-off, one log line per streak */
};

static void kick(struct warm *w);

static void schedule(struct warm *w, long delay_ms)
{
	if (w->closing || evtimer_pending(w->launch, NULL))
		return;
	struct timeval tv = {.tv_sec = delay_ms / 1000, .tv_usec = (delay_ms % 1000) * 1000};
	evtimer_add(w->launch, &tv);
}

static void release(struct warming *f)
{
	struct warm *w = f->w;
	if (f->report)
		event_del(f->report);
	f->sb = NULL;
	f->linking = NULL;
	f->wants_link = false;
	w->nflight--;
}

static void failed(struct warming *f, const char *why)
{
	struct warm *w = f->w;
	if (f->sb)
		registry_discard(w->reg, f->sb);
	release(f);
	if (w->failures++ == 0)
		fprintf(stderr, "e2b-local-backend: cannot start a warm sandbox (retrying): %s\n", why);
	long delay = WARM_BACKOFF_MIN_MS;
	for (unsigned i = 1; i < w->failures && delay < WARM_BACKOFF_MAX_MS; i++)
		delay *= 2;
	schedule(w, delay < WARM_BACKOFF_MAX_MS ? delay : WARM_BACKOFF_MAX_MS);
	kick(w); /* a link another one waits for may go on */
}

static void become_ready(struct warming *f)
{
	struct warm *w = f->w;
	w->ready[w->nready++] = f->sb;
	release(f);
	w->failures = 0;
	kick(w);
}

/* Step 3, on the worker: its link, relay sockets and resolv.conf. */
static void link_work(void *arg)
{
	struct warming *f = arg;
	net_sandbox_attach_work(f->linking);
}

/* Step 3, back on the loop: its relay and (open) rules; then it is ready. */
static void link_done(void *arg)
{
	struct warming *f = arg;
	struct warm *w = f->w;
	w->worker_busy = false;
	char why[256];
	int rc = net_sandbox_attach_end(f->linking, why, sizeof why);
	f->linking = NULL;
	if (w->closing)
		return;
	if (rc != 0)
		failed(f, why);
	else
		become_ready(f);
}

/* Step 3: its address and network; the link is made on the worker. */
static void start_link(struct warming *f)
{
	struct warm *w = f->w;
	f->wants_link = false;
	char why[256];
	struct net_policy open;
	if (net_policy_parse(NULL, NULL, -1, &open, why, sizeof why) != 0 ||
	    net_sandbox_attach_begin(f->sb, &open, &f->linking, why, sizeof why) != 0) {
		failed(f, why);
		return;
	}
	if (!f->linking) {
		become_ready(f); /* no networking */
		return;
	}
	w->worker_busy = true;
	worker_run(w->worker, link_work, link_done, f); /* idle: kick checked it */
}

/* Step 2: the init said how its start went. */
static void on_report(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warming *f = arg;
	struct runtime_error err;
	if (runtime_sandbox_await(f->sb, &err) != 0) {
		failed(f, err.message);
		return;
	}
	f->wants_link = true;
	kick(f->w);
}

/* Step 1, on the worker: cgroups, overlay and the init's clone. */
static void build_work(void *arg)
{
	struct warming *f = arg;
	f->built = runtime_sandbox_build(f->sb, &f->build_err);
}

/* Step 1, back on the loop: its init is let go. */
static void build_done(void *arg)
{
	struct warming *f = arg;
	struct warm *w = f->w;
	w->worker_busy = false;
	if (w->closing)
		return;
	if (f->built != 0) {
		failed(f, f->build_err.message);
		return;
	}
	runtime_sandbox_setup_in_background(f->sb);
	int report = runtime_sandbox_report_fd(f->sb);
	if (report < 0) {
		f->wants_link = true;
	} else if (event_assign(f->report, w->base, report, EV_READ, on_report, f) != 0 ||
		   event_priority_set(f->report, WARM_PRIORITY) != 0 || event_add(f->report, NULL) != 0) {
		/* event_assign forgets the priority: set again for each pipe */
		failed(f, "cannot watch its init");
		return;
	}
	kick(w);
}

/* Step 1: what a create checks, its id range and disk; the rest on the worker. */
static void launch(struct warm *w)
{
	struct warming *f = NULL;
	for (size_t i = 0; i < WARM_IN_FLIGHT && !f; i++)
		if (!w->flight[i].sb)
			f = &w->flight[i];
	struct runtime_error err;
	/* What a create checks first (the template, free disk space). */
	if (runtime_check_create(w->shape.template_id, w->shape.cpu_count, w->shape.memory_mb,
		    w->shape.disk_size_mb, &err) != 0) {
		w->nflight++;
		failed(f, err.message);
		return;
	}
	f->sb = registry_launch_reserved(w->reg, &w->shape, &err);
	w->nflight++;
	if (!f->sb) {
		failed(f, err.message);
		return;
	}
	w->worker_busy = true;
	worker_run(w->worker, build_work, build_done, f); /* idle: kick checked it */
}

/* The worker is free: a link first (that sandbox is nearly ready), else a
 * new sandbox when the pool and those in flight are short of its size. */
static void kick(struct warm *w)
{
	if (w->closing || w->worker_busy)
		return;
	for (size_t i = 0; i < WARM_IN_FLIGHT; i++) {
		if (w->flight[i].sb && w->flight[i].wants_link) {
			start_link(&w->flight[i]);
			return;
		}
	}
	if (w->nready + w->nflight < w->size && w->nflight < WARM_IN_FLIGHT)
		schedule(w, 0);
}

static void on_launch(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	if (!w->worker_busy && w->nready + w->nflight < w->size && w->nflight < WARM_IN_FLIGHT)
		launch(w);
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
	w->worker = worker_new(base, WARM_PRIORITY, WARM_WORKER_NICE);
	bool made = w->template_id && w->ready && w->launch && w->worker &&
		event_priority_set(w->launch, WARM_PRIORITY) == 0;
	for (size_t i = 0; i < WARM_IN_FLIGHT; i++) {
		w->flight[i].w = w;
		made = made && (w->flight[i].report = event_new(base, -1, 0, NULL, NULL));
	}
	if (!made) {
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
	kick(w);
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
	for (size_t i = 0; i < WARM_IN_FLIGHT; i++) {
		if (w->flight[i].sb)
			registry_discard(w->reg, w->flight[i].sb);
		if (w->flight[i].report)
			event_free(w->flight[i].report);
	}
	while (w->ready && w->nready > 0)
		registry_discard(w->reg, w->ready[--w->nready]);
	free(w->ready);
	free(w->template_id);
	free(w);
}
