/* The command of an INIT_SPAWN as the backend wrote it in its memfd
 * (lib/init_wire.h, struct init_spawn_blob), read in place. */
#ifndef E2B_INIT_COMMAND_H
#define E2B_INIT_COMMAND_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/init_wire.h"

/* Pointers into the blob, and three NULL-ended vectors of its strings. */
struct init_command {
	const struct init_spawn_blob *head;
	const gid_t *groups; /* head->ngroups of them */
	const char *cwd;
	char **argv, **envp, **paths;
};

/* Reads the size bytes at base (which must stay mapped while c is used).
 * 0, or -1 with errno EINVAL when they are not a whole command (a size that
 * is not head->size, too many groups, no argument, no path to try, a string
 * that runs past the end), ENOMEM. */
int init_command_parse(char *base, size_t size, struct init_command *c);

/* The vectors init_command_parse allocated. */
void init_command_free(struct init_command *c);

#endif
