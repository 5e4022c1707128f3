/* The reader of an INIT_SPAWN's command (init_command.h). */
#define _GNU_SOURCE
#include "init_command.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* n strings from *at (each NUL-terminated before end) into a NULL-ended
 * vector; 0, or -1 when they run past end. */
static int strings(char **at, const char *end, uint32_t n, char ***out)
{
	if ((size_t)n > (size_t)(end - *at)) {
		errno = EINVAL; /* each string takes a byte at least */
		return -1;
	}
	char **v = calloc((size_t)n + 1, sizeof *v);
	if (!v)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		char *nul = memchr(*at, '\0', (size_t)(end - *at));
		if (!nul) {
			free(v);
			errno = EINVAL;
			return -1;
		}
		v[i] = *at;
		*at = nul + 1;
	}
	*out = v;
	return 0;
}

int init_command_parse(char *base, size_t size, struct init_command *c)
{
	memset(c, 0, sizeof *c);
	errno = EINVAL;
	if (size < sizeof *c->head || size > INIT_SPAWN_BLOB_MAX)
		return -1;
	c->head = (const void *)base;
	if (c->head->size != size || c->head->ngroups > INIT_SPAWN_GROUPS_MAX || c->head->argc == 0 ||
		c->head->npaths == 0)
		return -1;
	size_t groups_end = sizeof *c->head + (size_t)c->head->ngroups * sizeof(uint32_t);
	if (groups_end > size)
		return -1;
	c->groups = (const gid_t *)(const void *)(base + sizeof *c->head);
	char *at = base + groups_end;
	const char *end = base + size;
	const char *nul = memchr(at, '\0', (size_t)(end - at));
	if (!nul)
		return -1;
	c->cwd = at;
	at += nul - at + 1;
	if (strings(&at, end, c->head->argc, &c->argv) != 0 ||
		strings(&at, end, c->head->envc, &c->envp) != 0 ||
		strings(&at, end, c->head->npaths, &c->paths) != 0) {
		int e = errno;
		init_command_free(c);
		errno = e;
		return -1;
	}
	return 0;
}

void init_command_free(struct init_command *c)
{
	free(c->argv);
	free(c->envp);
	free(c->paths);
	c->argv = c->envp = c->paths = NULL;
}
