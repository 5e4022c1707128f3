/* A sandbox's usage from its cgroups and disk (runtime_metrics.h). */
#include "runtime/runtime_metrics.h"

#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_state.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

int runtime_metrics_read(const struct sandbox *sb, struct runtime_usage *out)
{
	const struct sandbox_rt *rt = sb->rt;
	memset(out, 0, sizeof *out);
	struct runtime_cgroup_usage u;
	if (!rt || runtime_cgroup_usage(&rt->cg, &u) != 0)
		return -1;
	out->cpu_ns = u.cpu_ns;
	/* Like E2B's memUsed (the guest's total minus available): the page
	 * cache is reported apart, as memCache. */
	out->mem_cache = (int64_t)u.cache;
	out->mem_used = (int64_t)(u.memory > u.cache ? u.memory - u.cache : 0);
	char disk[4096];
	struct statvfs vfs;
	snprintf(disk, sizeof disk, "%s/" RUNTIME_DISK_MOUNT, sb->dir);
	if (rt->disk.mounted && statvfs(disk, &vfs) == 0) {
		out->disk_total = (int64_t)(vfs.f_blocks * vfs.f_frsize);
		out->disk_used = (int64_t)((vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize);
	}
	return 0;
}
