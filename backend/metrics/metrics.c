/* Sampling every sandbox's usage on a timer, into a ring each (metrics.h). */
#include "metrics/metrics.h"

#include "lib/clock.h"
#include "registry/registry.h"
#include "runtime/runtime_metrics.h"

#include <event2/event.h>
#include <stdlib.h>

struct sandbox_metrics {
	struct metrics_sample ring[METRICS_HISTORY];
	size_t first, count;  /* the oldest sample's slot, and how many there are */
	uint64_t last_cpu_ns; /* the reading the next sample's CPU share starts from */
	int64_t last_ms;
};

struct metrics {
	struct registry *reg;
	struct event *timer;
};

static void take_reading(struct sandbox_metrics *sm, const struct runtime_usage *u, int64_t now_ms)
{
	sm->last_cpu_ns = u->cpu_ns;
	sm->last_ms = now_ms;
}

static void sample(struct sandbox *sb)
{
	struct sandbox_metrics *sm = sb->metrics;
	struct runtime_usage u;
	int64_t now = clock_now_ms();
	if (runtime_metrics_read(sb, &u) != 0 || now <= sm->last_ms)
		return;
	/* CPU time over wall time, shared out over its CPUs, as E2B's
	 * cpuUsedPct (0..100, two decimals). */
	double wall_ns = (double)(now - sm->last_ms) * 1e6 * (sb->cpu_count > 0 ? sb->cpu_count : 1);
	double pct = u.cpu_ns >= sm->last_cpu_ns ? (double)(u.cpu_ns - sm->last_cpu_ns) / wall_ns * 100 : 0;
	if (pct > 100)
		pct = 100;
	take_reading(sm, &u, now);
	size_t slot = (sm->first + sm->count) % METRICS_HISTORY;
	if (sm->count == METRICS_HISTORY)
		sm->first = (sm->first + 1) % METRICS_HISTORY;
	else
		sm->count++;
	sm->ring[slot] = (struct metrics_sample){.at_ms = now,
		.cpu_used_pct = (double)(int64_t)(pct * 100 + 0.5) / 100,
		.mem_used = u.mem_used,
		.mem_cache = u.mem_cache,
		.disk_used = u.disk_used,
		.disk_total = u.disk_total};
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct metrics *m = arg;
	for (size_t i = 0; i < registry_count(m->reg); i++) {
		struct sandbox *sb = registry_at(m->reg, i);
		if (sb->metrics && sb->state == SANDBOX_RUNNING)
			sample(sb);
	}
}

static void on_created(void *ctx, struct sandbox *sb)
{
	(void)ctx;
	struct runtime_usage u;
	if (runtime_metrics_read(sb, &u) != 0)
		return; /* no cgroups of its own: no samples */
	sb->metrics = calloc(1, sizeof *sb->metrics);
	if (sb->metrics)
		take_reading(sb->metrics, &u, clock_now_ms());
}

/* The time it stood paused does not count into the next sample. */
static void on_resumed(void *ctx, struct sandbox *sb)
{
	(void)ctx;
	struct runtime_usage u;
	if (sb->metrics && runtime_metrics_read(sb, &u) == 0)
		take_reading(sb->metrics, &u, clock_now_ms());
}

static void on_removing(void *ctx, struct sandbox *sb)
{
	(void)ctx;
	free(sb->metrics);
	sb->metrics = NULL;
}

struct metrics *metrics_new(struct event_base *base, struct registry *reg, int interval_s)
{
	struct metrics *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->reg = reg;
	m->timer = event_new(base, -1, EV_PERSIST, on_tick, m);
	struct timeval every = {.tv_sec = interval_s};
	if (!m->timer || event_add(m->timer, &every) != 0) {
		metrics_free(m);
		return NULL;
	}
	return m;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	if (m->timer)
		event_free(m->timer);
	free(m);
}

void metrics_registry_hooks(struct metrics *m, struct registry_hooks *hooks)
{
	*hooks = (struct registry_hooks){.ctx = m,
		.created = on_created,
		.resumed = on_resumed,
		.removing = on_removing};
}

size_t metrics_count(const struct sandbox *sb)
{
	return sb->metrics ? sb->metrics->count : 0;
}

const struct metrics_sample *metrics_at(const struct sandbox *sb, size_t i)
{
	const struct sandbox_metrics *sm = sb->metrics;
	return &sm->ring[(sm->first + i) % METRICS_HISTORY];
}
