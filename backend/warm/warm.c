/* The warm pool (warm.h). */
#include "warm/warm.h"

#include "lib/clock.h"
#include "lib/err.h"
#include "lib/worker.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_ids.h"
#include "store/store_layers.h"
#include "warm/warm_pool.h"

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
/* The standing pool, the templates' and those dropped with one in flight. */
#define WARM_MAX_POOLS (1 + WARM_MAX_TEMPLATES + WARM_IN_FLIGHT)
/* How often idle template pools are looked for, at most. */
#define WARM_SWEEP_S 30
/* A take leaves its pool one short; while the pool still holds a ready
 * one, the refill waits this long. Started at once, the refill's clone,
 * mounts and cgroups ran beside the claimed sandbox's first command (the
 * kernel's locks and caches are shared whatever the nice value), and that
 * command's first output came 4-10 ms later (docs/PERFORMANCE.md). */
#define WARM_REFILL_PAUSE_MS 30

/* One sandbox being made: worker build, then its init's report, then the
 * worker's link, then ready. */
struct warming {
	struct warm *w;
	struct warm_pool *p;  /* the pool it is for */
	struct sandbox *sb;   /* NULL: the slot is free */
	struct event *report; /* its init's report pipe */
	int built;            /* runtime_sandbox_build's result, and its error */
	struct err build_err;
	struct net_attach *linking; /* net_sandbox_attach's middle part */
	bool wants_link;            /* its init reported: the worker links it next */
};

/* A pooled sandbox whose template's start command is not ready yet. */
struct warm_start_wait {
	struct warm *w;
	struct warm_pool *p;
	struct sandbox *sb;
	void *handle; /* the starter's */
	struct warm_start_wait *next;
};

struct warm {
	struct event_base *base;
	struct registry *reg;
	size_t size;                             /* each pool's */
	size_t templates;                        /* at most this many templates' pools */
	long template_idle_s;                    /* a template's pool unused this long is dropped */
	struct warm_pool *pools[WARM_MAX_POOLS]; /* the standing one first */
	size_t npools;
	struct warming flight[WARM_IN_FLIGHT];
	size_t nflight;
	uint64_t taken; /* creates served by a pooled sandbox */
	struct event *launch;
	bool pausing;          /* launch is a refill's pause, not a back-off */
	struct event *sweep;   /* drops idle template pools */
	struct worker *worker; /* runs the long steps, one at a time (worker.h) */
	bool worker_busy;
	bool closing;                /* warm_free: a step that ends only cleans up */
	unsigned failures;           /* in a row: the back-off, one log line per streak */
	struct warm_starter starter; /* begin NULL: none */
	struct warm_start_wait *starting;
};

static void kick(struct warm *w);

static void schedule(struct warm *w, long delay_ms)
{
	if (w->closing || evtimer_pending(w->launch, NULL))
		return;
	struct timeval tv = {.tv_sec = delay_ms / 1000, .tv_usec = (delay_ms % 1000) * 1000};
	evtimer_add(w->launch, &tv);
}

/* Frees p once dropped with nothing in flight or starting for it. */
static void settle(struct warm *w, struct warm_pool *p)
{
	if (!p->dropped || p->nflight > 0 || p->nstarting > 0)
		return;
	for (size_t i = 0; i < w->npools; i++) {
		if (w->pools[i] == p) {
			w->pools[i] = w->pools[--w->npools];
			break;
		}
	}
	warm_pool_free(p, w->reg);
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
	struct warm_pool *p = f->p;
	f->p = NULL;
	p->nflight--;
	settle(w, p);
}

/* One more failure in a row: the next launch waits longer. */
static void back_off(struct warm *w, const char *why)
{
	if (w->failures++ == 0)
		fprintf(stderr, "e2b-local-backend: cannot start a warm sandbox (retrying): %s\n", why);
	long delay = WARM_BACKOFF_MIN_MS;
	for (unsigned i = 1; i < w->failures && delay < WARM_BACKOFF_MAX_MS; i++)
		delay *= 2;
	schedule(w, delay < WARM_BACKOFF_MAX_MS ? delay : WARM_BACKOFF_MAX_MS);
}

static void failed(struct warming *f, const char *why)
{
	struct warm *w = f->w;
	if (f->sb)
		registry_discard(w->reg, f->sb);
	release(f);
	back_off(w, why);
	kick(w); /* a link another one waits for may go on */
}

/* The starter's report: the sandbox is ready, or it goes. */
static void on_started(void *arg, const struct err *err)
{
	struct warm_start_wait *s = arg;
	struct warm *w = s->w;
	struct warm_pool *p = s->p;
	for (struct warm_start_wait **pp = &w->starting; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	p->nstarting--;
	if (err || p->dropped)
		registry_discard(w->reg, s->sb);
	else
		p->ready[p->nready++] = s->sb;
	free(s);
	if (err)
		back_off(w, err->msg);
	else
		w->failures = 0;
	settle(w, p);
	kick(w);
}

/* Its template's start command, off the worker's slots: a start (a kernel
 * or a server coming up) may take seconds. */
static void start_command(struct warm *w, struct warm_pool *p, struct sandbox *sb)
{
	struct warm_start_wait *s = calloc(1, sizeof *s);
	if (!s) {
		registry_discard(w->reg, sb);
		back_off(w, "out of memory");
		return;
	}
	*s = (struct warm_start_wait){.w = w, .p = p, .sb = sb, .next = w->starting};
	w->starting = s;
	p->nstarting++;
	s->handle = w->starter.begin(w->starter.ctx, sb, p->start, on_started, s);
	if (!s->handle) {
		struct err err;
		err_set(&err, 0, "cannot run its template's start command");
		on_started(s, &err);
	}
}

static void become_ready(struct warming *f)
{
	struct warm *w = f->w;
	struct warm_pool *p = f->p;
	if (p->dropped) {
		registry_discard(w->reg, f->sb);
	} else if (p->start) {
		start_command(w, p, f->sb);
	} else {
		p->ready[p->nready++] = f->sb;
		w->failures = 0;
	}
	release(f);
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
	struct err why;
	int rc = net_sandbox_attach_end(f->linking, &why);
	f->linking = NULL;
	if (w->closing)
		return;
	if (rc != 0)
		failed(f, why.msg);
	else
		become_ready(f);
}

/* Step 3: its address and network; the link is made on the worker. */
static void start_link(struct warming *f)
{
	struct warm *w = f->w;
	f->wants_link = false;
	struct err why;
	struct net_policy open;
	if (net_policy_parse(NULL, NULL, -1, &open, &why) != 0 ||
		net_sandbox_attach_begin(f->sb, &open, &f->linking, &why) != 0) {
		failed(f, why.msg);
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
	struct err err;
	if (runtime_sandbox_await(f->sb, &err) != 0) {
		failed(f, err.msg);
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
		failed(f, f->build_err.msg);
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

/* The pool to fill next: the one shortest of its size, and of those the
 * one taken from last (so pools used in turn are filled in turn). */
static struct warm_pool *neediest(const struct warm *w)
{
	struct warm_pool *best = NULL;
	for (size_t i = 0; i < w->npools; i++) {
		struct warm_pool *p = w->pools[i];
		size_t short_by = warm_pool_short(p), best_by = best ? warm_pool_short(best) : 0;
		if (short_by > best_by || (short_by > 0 && short_by == best_by && p->used_ms > best->used_ms))
			best = p;
	}
	return best;
}

/* Step 1: what a create checks, its id range and disk; the rest on the worker. */
static void launch(struct warm *w, struct warm_pool *p)
{
	struct warming *f = NULL;
	for (size_t i = 0; i < WARM_IN_FLIGHT && !f; i++)
		if (!w->flight[i].sb)
			f = &w->flight[i];
	f->p = p;
	p->nflight++;
	w->nflight++;
	struct err err;
	/* What a create checks first (the template, free disk space). */
	if (runtime_check_create(p->shape.template_id, p->shape.cpu_count, p->shape.memory_mb,
		    p->shape.disk_size_mb, &err) != 0) {
		failed(f, err.msg);
		return;
	}
	f->sb = registry_launch_reserved(w->reg, &p->shape, &err);
	if (!f->sb) {
		failed(f, err.msg);
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
	if (w->nflight < WARM_IN_FLIGHT && neediest(w))
		schedule(w, 0);
}

static void on_launch(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	w->pausing = false;
	struct warm_pool *p = w->worker_busy || w->nflight >= WARM_IN_FLIGHT ? NULL : neediest(w);
	if (p)
		launch(w, p);
}

/* No longer taken from: its ready ones go now, those in flight when made. */
static void drop(struct warm *w, struct warm_pool *p)
{
	p->dropped = true;
	while (p->nready > 0)
		registry_discard(w->reg, p->ready[--p->nready]);
	settle(w, p);
}

static void arm_sweep(struct warm *w)
{
	struct timeval tv = {.tv_sec = w->template_idle_s < WARM_SWEEP_S ? w->template_idle_s : WARM_SWEEP_S};
	evtimer_add(w->sweep, &tv);
}

static void on_sweep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	int64_t idle_since = clock_now_ms() - (int64_t)w->template_idle_s * 1000;
	bool left = false;
	for (size_t i = w->npools; i-- > 0;) {
		struct warm_pool *p = w->pools[i];
		if (p->standing || p->dropped)
			continue;
		if (p->used_ms < idle_since)
			drop(w, p);
		else
			left = true;
	}
	if (left) /* look again while any template has a pool */
		arm_sweep(w);
}

/* A pool for spec's stack (and start), the template pool used longest ago
 * dropped when there are as many as allowed. */
static void add_template_pool(struct warm *w, const struct sandbox_spec *spec, const void *start)
{
	size_t live = 0;
	struct warm_pool *oldest = NULL;
	for (size_t i = 0; i < w->npools; i++) {
		struct warm_pool *p = w->pools[i];
		if (p->standing || p->dropped)
			continue;
		live++;
		if (!oldest || p->used_ms < oldest->used_ms)
			oldest = p;
	}
	if (w->templates == 0)
		return;
	if (live >= w->templates)
		drop(w, oldest);
	if (w->npools >= WARM_MAX_POOLS)
		return; /* dropped ones still in flight: the next create tries again */
	struct warm_pool *p = warm_pool_new(spec, start, w->size, false);
	if (!p)
		return;
	w->pools[w->npools++] = p;
	if (!evtimer_pending(w->sweep, NULL))
		arm_sweep(w);
	kick(w);
}

struct warm *warm_new(struct event_base *base, struct registry *reg, const struct sandbox_spec *shape,
	size_t size, size_t templates, long template_idle_s)
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
	w->templates = templates < WARM_MAX_TEMPLATES ? templates : WARM_MAX_TEMPLATES;
	w->template_idle_s = template_idle_s > 0 ? template_idle_s : WARM_DEFAULT_TEMPLATE_IDLE_S;
	struct sandbox_spec standing = {.template_id = shape->template_id,
		.cpu_count = shape->cpu_count,
		.memory_mb = shape->memory_mb,
		.disk_size_mb = shape->disk_size_mb};
	if ((w->pools[0] = warm_pool_new(&standing, NULL, size, true)))
		w->npools = 1;
	w->launch = evtimer_new(base, on_launch, w);
	w->sweep = evtimer_new(base, on_sweep, w);
	w->worker = worker_new(base, WARM_PRIORITY, WARM_WORKER_NICE);
	bool made = w->npools == 1 && w->launch && w->sweep && w->worker &&
		event_priority_set(w->launch, WARM_PRIORITY) == 0 &&
		event_priority_set(w->sweep, WARM_PRIORITY) == 0;
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

/* The pause (WARM_REFILL_PAUSE_MS) while p still holds a ready sandbox;
 * an empty pool is refilled at once, ending a pause: the next create
 * would otherwise start its sandbox itself, which costs more. */
static void refill_after_take(struct warm *w, const struct warm_pool *p)
{
	if (p->nready > 0) {
		if (!evtimer_pending(w->launch, NULL)) {
			schedule(w, WARM_REFILL_PAUSE_MS);
			w->pausing = !w->closing;
		}
		return;
	}
	if (w->pausing) {
		evtimer_del(w->launch);
		w->pausing = false;
	}
	kick(w);
}

static struct warm_pool *find(const struct warm *w, const struct sandbox_spec *spec, const void *start)
{
	for (size_t i = 0; i < w->npools; i++)
		if (w->pools[i]->start == start && warm_pool_fits(w->pools[i], spec))
			return w->pools[i];
	return NULL;
}

void warm_set_starter(struct warm *w, const struct warm_starter *starter)
{
	if (w)
		w->starter = *starter;
}

struct sandbox *warm_take(struct warm *w, const struct sandbox_spec *spec, const void *start)
{
	if (!w || (start && !w->starter.begin))
		return NULL;
	struct warm_pool *p = find(w, spec, start);
	if (!p) {
		if ((spec->layer_count > 0 || start) && cJSON_GetArraySize(spec->volume_mounts) == 0)
			add_template_pool(w, spec, start);
		return NULL;
	}
	p->used_ms = clock_now_ms();
	while (p->nready > 0) {
		struct sandbox *sb = p->ready[--p->nready];
		if (runtime_sandbox_alive(sb)) {
			w->taken++;
			refill_after_take(w, p);
			return sb;
		}
		/* Its init was killed from outside while it waited: it could run
		 * nothing. Never handed out. */
		fprintf(stderr, "warm pool: a ready sandbox's init has ended; it is dropped\n");
		registry_discard(w->reg, sb);
		refill_after_take(w, p);
	}
	return NULL;
}

void warm_counts(const struct warm *w, struct warm_counts *out)
{
	*out = (struct warm_counts){0};
	if (!w)
		return;
	out->ready = w->pools[0]->nready;
	out->size = w->size;
	out->taken = w->taken;
	for (size_t i = 1; i < w->npools; i++) {
		out->templates += !w->pools[i]->dropped;
		out->templates_ready += w->pools[i]->nready;
	}
}

void warm_forget_templates(struct warm *w)
{
	for (size_t i = w ? w->npools : 0; i-- > 0;)
		if (!w->pools[i]->standing && !w->pools[i]->dropped)
			drop(w, w->pools[i]);
}

void warm_keep_layers(void *ctx, void (*keep)(void *set, const char *id), void *set)
{
	const struct warm *w = ctx;
	for (size_t i = 0; w && i < w->npools; i++) {
		const struct warm_pool *p = w->pools[i];
		for (size_t k = 0; k < p->shape.layer_count; k++)
			for (size_t j = 0; j < store_layers_count(); j++)
				if (strcmp(store_layers_at(j)->root, p->layers[k]) == 0)
					keep(set, store_layers_at(j)->id);
	}
}

void warm_free(struct warm *w)
{
	if (!w)
		return;
	w->closing = true;
	worker_free(w->worker); /* the step in progress ends first */
	if (w->launch)
		event_free(w->launch);
	if (w->sweep)
		event_free(w->sweep);
	for (size_t i = 0; i < WARM_IN_FLIGHT; i++) {
		if (w->flight[i].sb)
			registry_discard(w->reg, w->flight[i].sb);
		if (w->flight[i].report)
			event_free(w->flight[i].report);
	}
	while (w->starting) {
		struct warm_start_wait *s = w->starting;
		w->starting = s->next;
		w->starter.abandon(s->handle);
		registry_discard(w->reg, s->sb);
		free(s);
	}
	for (size_t i = 0; i < w->npools; i++)
		warm_pool_free(w->pools[i], w->reg);
	free(w);
}
