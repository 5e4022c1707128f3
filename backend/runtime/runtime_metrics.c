/* A sandbox's usage from its cgroups and disk (runtime_metrics.h). */
#include "runtime/runtime_metrics.h"

#include "registry/registry.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_state.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Reads a small control file whole into buf (NUL-terminated). */
static int read_control(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int read_number(const char *dir, const char *file, uint64_t *out)
{
	char buf[64];
	return read_control(dir, file, buf, sizeof buf) == 0 && sscanf(buf, "%" SCNu64, out) == 1 ? 0 : -1;
}

/* The value of one "key value" line of memory.stat, 0 when absent. */
static uint64_t stat_value(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *line = text;
	while (line && *line) {
		uint64_t v;
		if (strncmp(line, key, len) == 0 && line[len] == ' ' && sscanf(line + len + 1, "%" SCNu64, &v) == 1)
			return v;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

int runtime_metrics_read(const struct sandbox *sb, struct runtime_usage *out)
{
	const struct sandbox_rt *rt = sb->rt;
	memset(out, 0, sizeof *out);
	if (!rt || !rt->cg[RT_MEMORY] || !rt->cg[RT_CPUACCT])
		return -1;
	uint64_t usage;
	char stat[4096];
	if (read_number(rt->cg[RT_CPUACCT], "cpuacct.usage", &out->cpu_ns) != 0 ||
	    read_number(rt->cg[RT_MEMORY], "memory.usage_in_bytes", &usage) != 0 ||
	    read_control(rt->cg[RT_MEMORY], "memory.stat", stat, sizeof stat) != 0)
		return -1;
	/* Like E2B's memUsed (the guest's total minus available): the page
	 * cache is reported apart, as memCache. */
	uint64_t cache = stat_value(stat, "total_cache");
	out->mem_cache = (int64_t)cache;
	out->mem_used = (int64_t)(usage > cache ? usage - cache : 0);
	char disk[4096];
	struct statvfs vfs;
	snprintf(disk, sizeof disk, "%s/" RUNTIME_DISK_MOUNT, sb->dir);
	if (rt->disk.mounted && statvfs(disk, &vfs) == 0) {
		out->disk_total = (int64_t)(vfs.f_blocks * vfs.f_frsize);
		out->disk_used = (int64_t)((vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize);
	}
	return 0;
}
