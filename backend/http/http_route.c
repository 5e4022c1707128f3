/* Path pattern matching for the routers. */
#include "http/http_route.h"

#include <string.h>

bool route_match(const char *pattern, const char *path, char *capture, size_t cap)
{
	if (cap > 0)
		capture[0] = '\0';
	while (*pattern) {
		if (strncmp(pattern, "{}", 2) == 0) {
			size_t seg = strcspn(path, "/");
			if (seg == 0)
				return false;
			if (cap > 0) {
				size_t n = seg < cap - 1 ? seg : cap - 1;
				memcpy(capture, path, n);
				capture[n] = '\0';
			}
			path += seg;
			pattern += 2;
			continue;
		}
		if (*pattern != *path)
			return false;
		pattern++;
		path++;
	}
	return *path == '\0';
}
