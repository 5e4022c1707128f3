/* metrics/ — each sandbox's resource samples: CPU, memory and disk, taken
 * every interval (--metrics-interval, default 5 s) by one timer on the event
 * loop, kept in a ring of METRICS_HISTORY samples per sandbox and dropped
 * with the sandbox. A paused sandbox gets no new samples (its history
 * stays); a sandbox without cgroups of its own (rootless, --isolation none)
 * gets none at all.
 * Owns: struct sandbox_metrics (sandbox.metrics) and the sampling timer.
 * May call: registry/ (the sandboxes, struct sandbox; its hooks are
 * registered by main.c), runtime/ (runtime_metrics.h: the raw figures) and
 * lib/. Called by main.c (setup, hooks, teardown) and api/ (the samples). */
#ifndef E2B_BACKEND_METRICS_H
#define E2B_BACKEND_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct registry;
struct registry_hooks;
struct sandbox;

#define METRICS_DEFAULT_INTERVAL_S 5
#define METRICS_HISTORY 720 /* samples kept per sandbox: an hour at the default interval */

/* One sample, as E2B's SandboxMetric has it (cpuCount and memTotal are the
 * sandbox's own, from struct sandbox). */
struct metrics_sample {
	int64_t at_ms;       /* when it was taken, Unix milliseconds */
	double cpu_used_pct; /* share of its cpuCount CPUs used since the sample before, 0..100 */
	int64_t mem_used;    /* bytes, page cache not counted */
	int64_t mem_cache;   /* bytes of page cache */
	int64_t disk_used;   /* bytes on its disk image; 0 when it has none */
	int64_t disk_total;
};

struct metrics;

/* Starts the timer. NULL when out of memory. */
struct metrics *metrics_new(struct event_base *base, struct registry *reg, int interval_s);
/* After registry_free (whose removing hooks free every sandbox's ring). */
void metrics_free(struct metrics *m);
/* created: the ring and a first reading (the next sample's CPU is measured
 * from it); resumed: a fresh reading; removing: the ring goes. */
void metrics_registry_hooks(struct metrics *m, struct registry_hooks *hooks);

/* How many samples sb has (0 when it gets none), and the i-th, oldest first. */
size_t metrics_count(const struct sandbox *sb);
const struct metrics_sample *metrics_at(const struct sandbox *sb, size_t i);

#endif
