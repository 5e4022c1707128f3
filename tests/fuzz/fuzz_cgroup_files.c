/* libFuzzer target: the readers of cgroup files
 * (backend/runtime/runtime_cgroup_parse.c), which read /proc/self/cgroup,
 * cgroup.controllers, cgroup.events, cpu.stat and memory.stat. The first
 * input byte picks an output capacity and a key; the rest is the file's
 * text. Any bytes: no crash, no read past them; a path found is absolute,
 * fits, has no newline and no ".." component, and is the text of a "0::"
 * line; a controller listed is a whole word of the list; a keyed value is
 * the digits after "<key> " at a line's start. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_cgroup_parse.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const keys[] = {"populated", "frozen", "usage_usec", "file", "total_cache", "memory",
	"cpu", "a"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t pick = data[0];
	data++;
	size--;
	/* An exact-size copy with its NUL: ASan sees any read past the end. */
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	size_t len = strlen(text);

	size_t cap = 1 + pick % 64;
	char *out = malloc(cap);
	if (runtime_cgroup_parse_self(text, out, cap) == 0) {
		size_t n = strlen(out);
		REQUIRE(n < cap && out[0] == '/' && !strchr(out, '\n'), "path %s (capacity %zu)", out, cap);
		char *line = malloc(n + 5);
		snprintf(line, n + 5, "0::%s", out);
		/* Some occurrence is a whole line (an earlier one may be a prefix of another line). */
		int whole_line = 0;
		for (const char *at = text; !whole_line && (at = strstr(at, line)) != NULL; at++)
			whole_line =
				(at == text || at[-1] == '\n') && (at[n + 3] == '\n' || at[n + 3] == '\0');
		REQUIRE(whole_line, "no line 0::%s", out);
		for (const char *c = out; (c = strstr(c, "/..")) != NULL; c++)
			REQUIRE(c[3] != '/' && c[3] != '\0', "a .. in %s", out);
		free(line);
	}
	free(out);

	const char *key = keys[pick % (sizeof keys / sizeof keys[0])];
	if (runtime_cgroup_lists(text, key)) {
		size_t k = strlen(key);
		int whole = 0;
		for (const char *c = text; (c = strstr(c, key)) != NULL; c++) {
			int before = c == text || c[-1] == ' ' || c[-1] == '\n' || c[-1] == '\t';
			int after = c[k] == '\0' || c[k] == ' ' || c[k] == '\n' || c[k] == '\t';
			whole |= before && after;
		}
		REQUIRE(whole, "%s listed, but not a word of the list", key);
	}

	uint64_t v = 0;
	if (runtime_cgroup_keyed(text, key, &v) == 0) {
		char want[96];
		snprintf(want, sizeof want, "%s %llu", key, (unsigned long long)v);
		size_t w = strlen(want);
		int found = 0;
		for (const char *c = text; c && *c; c = strchr(c, '\n') ? strchr(c, '\n') + 1 : NULL)
			if (strncmp(c, key, strlen(key)) == 0 && c[strlen(key)] == ' ') {
				/* the first such line decides: leading zeros aside, the same digits */
				const char *d = c + strlen(key) + 1;
				while (*d == '0' && d[1] >= '0' && d[1] <= '9')
					d++;
				found = strncmp(d, want + strlen(key) + 1, w - strlen(key) - 1) == 0;
				break;
			}
		REQUIRE(found, "%s = %llu is not the first %s line's", key, (unsigned long long)v, key);
	}
	(void)len;
	free(text);
	return 0;
}
