/* The warm pool (warm.h). */
#include "warm/warm.h"

#include "http/http_conns.h"
#include "lib/clock.h"
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
/* A step that holds the loop for milliseconds waits for a quiet moment: no
 * request head for WARM_QUIET_MS (a claimed sandbox's first command comes
 * a millisecond or two after its create's answer) and no request younger
 * than WARM_YOUNG_MS still in progress (that command's first output), but
 * never more than WARM_DEFER_MAX_MS; and not at all when the pool is empty:
 * then the next create would start a sandbox from nothing, which costs it
 * more than any wait the refill causes. */
#define WARM_QUIET_MS 3
#define WARM_YOUNG_MS 15
#define WARM_DEFER_MAX_MS 40
#define WARM_RECHECK_MS 1

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
	unsigned failures;        /* in a row: the back-off, one log line per streak */
	int64_t due_ms;           /* when the step waiting for a quiet moment became due */
};

/* Whether a step due since w->due_ms may run now; if not, ev (a timer) is
 * armed to ask again. */
static bool quiet_moment(struct warm *w, struct event *ev)
{
	int64_t now = clock_now_ms();
	if (w->due_ms == 0)
		w->due_ms = now;
	if (w->nready == 0 || http_conns_quiet(WARM_QUIET_MS, WARM_YOUNG_MS) ||
	    now - w->due_ms >= WARM_DEFER_MAX_MS) {
		w->due_ms = 0;
		return true;
	}
	struct timeval tv = {0, WARM_RECHECK_MS * 1000};
	evtimer_add(ev, &tv);
	return false;
}

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

/* Step 3: its interface, relay and (open) rules; then it is ready. */
static void on_attach(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	if (!quiet_moment(w, w->attach))
		return;
	char why[256];
	struct net_policy open;
	if (net_policy_parse(NULL, NULL, -1, &open, why, sizeof why) != 0 ||
	    net_sandbox_attach(w->starting, &open, why, sizeof why) != 0) {
		failed(w, why);
		return;
	}
	w->ready[w->nready++] = w->starting;
	w->starting = NULL;
	w->failures = 0;
	schedule(w, 0);
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

/* Step 1: ids, cgroups, disk, overlay; its init is let go. */
static void on_launch(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct warm *w = arg;
	if (!quiet_moment(w, w->launch))
		return;
	struct runtime_error err;
	/* What a create checks first (the template, free disk space). */
	if (runtime_check_create(w->shape.template_id, w->shape.cpu_count, w->shape.memory_mb,
		    w->shape.disk_size_mb, &err) != 0) {
		failed(w, err.message);
		return;
	}
	w->starting = registry_launch(w->reg, &w->shape, &err);
	if (!w->starting) {
		failed(w, err.message);
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
	if (!w->template_id || !w->ready || !w->launch || !w->report || !w->attach ||
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
