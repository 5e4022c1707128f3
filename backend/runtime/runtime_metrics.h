/* What a sandbox uses now, read from its cgroups and its disk: the raw
 * figures the metrics sampler (metrics/metrics.h) turns into E2B's samples.
 * A few small reads per call (v1: cpuacct.usage, memory.usage_in_bytes,
 * memory.stat; v2: cpu.stat, memory.current, memory.stat; one statvfs), so
 * it runs on the event loop. Calls runtime_cgroup.c and the kernel. */
#ifndef E2B_BACKEND_RUNTIME_METRICS_H
#define E2B_BACKEND_RUNTIME_METRICS_H

#include <stdint.h>

struct sandbox;

struct runtime_usage {
	uint64_t
		cpu_ns; /* CPU time of every process of the sandbox so far (cpuacct.usage; v2 cpu.stat usage_usec) */
	int64_t mem_used;   /* bytes charged to its memory cgroup, page cache not counted */
	int64_t mem_cache;  /* the page cache charged to it (memory.stat total_cache; v2 file) */
	int64_t disk_used;  /* bytes used on its disk image, ext4's own metadata included */
	int64_t disk_total; /* the image's size as its filesystem reports it */
};

/* 0 with *out filled; -1 when the sandbox has no cgroups of its own (with
 * a memory controller: rootless without one delegated, --isolation none)
 * or they cannot be read. */
int runtime_metrics_read(const struct sandbox *sb, struct runtime_usage *out);

#endif
