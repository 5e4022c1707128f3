/* The descriptor limit (RLIMIT_NOFILE). Each sandbox holds about twenty of
 * the backend's descriptors (its cgroups, namespaces, root, DNS relay), so a
 * soft limit of 1024, the usual one for a login shell, would run out long
 * before --max-sandboxes: the backend raises its soft limit to the hard one
 * at start, as Go's runtime does for every program, and gives the commands
 * it starts the soft limit it was started with. Knows nothing of the
 * backend. */
#ifndef E2B_BACKEND_LIB_FD_LIMIT_H
#define E2B_BACKEND_LIB_FD_LIMIT_H

#include <sys/resource.h>

/* Remembers the limit the process was started with and raises the soft
 * limit to the hard one (nothing when they are equal or it cannot). */
void fd_limit_raise(void);
/* The limit the process was started with, which a command it starts gets
 * back with setrlimit; NULL when fd_limit_raise raised nothing (it was
 * already the hard limit, or has not run): nothing to give back.
 * Reads only: safe in a child that shares the backend's memory. */
const struct rlimit *fd_limit_started(void);

#endif
