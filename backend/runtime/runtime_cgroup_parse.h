/* The text of cgroup files, read without the kernel: which hierarchy
 * /sys/fs/cgroup is (its filesystem's magic), a process's cgroup v2 in
 * /proc/<pid>/cgroup, whether a controller list names a controller, and
 * the values of flat keyed files (cgroup.events, cpu.stat, memory.stat).
 * Pure: unit-tested, and fuzzed (tests/fuzz/fuzz_cgroup_files.c). */
#ifndef E2B_BACKEND_RUNTIME_CGROUP_PARSE_H
#define E2B_BACKEND_RUNTIME_CGROUP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum runtime_cgroup_version {
	RT_CGROUP_NONE,
	RT_CGROUP_V1,
	RT_CGROUP_V2
};

/* From statfs(/sys/fs/cgroup).f_type, as runc and crun decide: cgroup2's
 * magic is v2 (the unified hierarchy alone); a tmpfs holds v1 controllers
 * (with or without a unified mount beside them, "hybrid": v1 for us);
 * anything else, no cgroups. */
enum runtime_cgroup_version runtime_cgroup_version_of(unsigned long fs_type);
/* The path of the "0::<path>" line of a /proc/<pid>/cgroup text (the v2
 * hierarchy's) into out: 0, or -1 when there is none, it is not absolute,
 * has a ".." (outside the reader's cgroup namespace) or does not fit. */
int runtime_cgroup_parse_self(const char *text, char *out, size_t size);
/* Whether a space-separated list (cgroup.controllers,
 * cgroup.subtree_control) names controller. */
bool runtime_cgroup_lists(const char *list, const char *controller);
/* The number of key in a flat keyed text ("<key> <value>" lines): 0 with
 * *out, -1 when the key is absent or its value is not a number. */
int runtime_cgroup_keyed(const char *text, const char *key, uint64_t *out);

#endif
