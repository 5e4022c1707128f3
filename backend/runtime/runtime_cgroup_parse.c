/* Reading cgroup files' text (runtime_cgroup_parse.h). */
#include "runtime/runtime_cgroup_parse.h"

#include <string.h>

#define CGROUP2_MAGIC 0x63677270UL /* CGROUP2_SUPER_MAGIC */
#define TMPFS_MAGIC_ 0x01021994UL  /* TMPFS_MAGIC */

enum runtime_cgroup_version runtime_cgroup_version_of(unsigned long fs_type)
{
	if (fs_type == CGROUP2_MAGIC)
		return RT_CGROUP_V2;
	if (fs_type == TMPFS_MAGIC_)
		return RT_CGROUP_V1;
	return RT_CGROUP_NONE;
}

int runtime_cgroup_parse_self(const char *text, char *out, size_t size)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len >= 3 && memcmp(line, "0::", 3) == 0) {
			const char *path = line + 3;
			size_t plen = len - 3;
			if (plen == 0 || path[0] != '/' || plen >= size)
				return -1;
			/* "/.." (and deeper) is how the kernel shows a cgroup outside
			 * the reader's cgroup namespace: not one to work in. */
			for (const char *c = path; c < path + plen;) {
				const char *slash = memchr(c, '/', (size_t)(path + plen - c));
				const char *cend = slash ? slash : path + plen;
				if (cend - c == 2 && c[0] == '.' && c[1] == '.')
					return -1;
				c = cend + 1;
			}
			memcpy(out, path, plen);
			out[plen] = '\0';
			return 0;
		}
		line = end ? end + 1 : NULL;
	}
	return -1;
}

bool runtime_cgroup_lists(const char *list, const char *controller)
{
	size_t want = strlen(controller);
	if (want == 0)
		return false;
	for (const char *p = list; *p;) {
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\n' && *p != '\t')
			p++;
		if ((size_t)(p - start) == want && memcmp(start, controller, want) == 0)
			return true;
	}
	return false;
}

int runtime_cgroup_keyed(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line;) {
		if (klen && strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			const char *p = line + klen + 1;
			if (*p < '0' || *p > '9')
				return -1;
			uint64_t v = 0;
			for (; *p >= '0' && *p <= '9'; p++) {
				unsigned d = (unsigned)(*p - '0');
				if (v > (UINT64_MAX - d) / 10)
					return -1; /* past 64 bits */
				v = v * 10 + d;
			}
			if (*p != '\n' && *p != '\0')
				return -1;
			*out = v;
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}
