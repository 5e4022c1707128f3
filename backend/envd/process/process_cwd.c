/* The working directory envd would use for a process (process_cwd.h). */
#define _GNU_SOURCE
#include "envd/process/process_cwd.h"

#include "http/http_connect.h"
#include "lib/text.h"

#include <stdlib.h>
#include <string.h>

/* Go's filepath.Clean for an absolute path, in place. The output never
 * overtakes the input: each element read was preceded by at least one '/'. */
static void clean_absolute(char *path)
{
	size_t n = strlen(path), i = 0, out = 0;
	while (i < n) {
		while (i < n && path[i] == '/')
			i++;
		if (i >= n)
			break;
		size_t start = i;
		while (i < n && path[i] != '/')
			i++;
		size_t len = i - start;
		if (len == 1 && path[start] == '.')
			continue;
		if (len == 2 && path[start] == '.' && path[start + 1] == '.') {
			while (out > 0 && path[out - 1] != '/')
				out--;
			if (out > 0)
				out--; /* and the '/' before it; ".." at the root stays at the root */
			continue;
		}
		path[out++] = '/';
		memmove(path + out, path + start, len);
		out += len;
	}
	if (out == 0)
		path[out++] = '/';
	path[out] = '\0';
}

char *process_resolve_cwd(const char *cwd, const char *home, const char *user, struct err *err)
{
	const char *path = cwd ? cwd : "";
	char *joined;
	if (path[0] == '~') {
		if (path[1] && path[1] != '/' && path[1] != '\\') {
			err_set(err, CONNECT_INVALID_ARGUMENT,
				"failed to expand path '%s' for user '%s': cannot expand user-specific home dir",
				path, user);
			return NULL;
		}
		joined = text_printf("%s/%s", home, path + 1);
	} else if (path[0] == '/') {
		joined = strdup(path); /* absolute paths are taken literally */
		if (joined)
			return joined;
	} else {
		joined = text_printf("%s/%s", home, path);
	}
	if (!joined) {
		err_set(err, CONNECT_INTERNAL, "out of memory");
		return NULL;
	}
	clean_absolute(joined);
	return joined;
}
