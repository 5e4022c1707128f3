/* runtime_init_copy.h — the sandbox init's copy on a tmpfs of the backend's
 * own mount namespace, which every sandbox binds at its INIT_SELF_PATH. */
#ifndef RUNTIME_INIT_COPY_H
#define RUNTIME_INIT_COPY_H

#include "lib/err.h"

/* Copies runtime_self()->init_path to a tmpfs mounted (in the backend's
 * private mount namespace) on a fresh directory of /dev/shm, and points
 * init_path and init_fd at the copy: 0, or -1 with err set. */
int runtime_init_copy(struct err *err);
/* Unmounts the copy's tmpfs and removes its directory. */
void runtime_init_copy_remove(void);

#endif
