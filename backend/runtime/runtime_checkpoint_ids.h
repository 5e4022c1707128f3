/* A checkpoint image moved to another sandbox's id range: CRIU restores the
 * user namespace's id maps its image holds (userns-*.img), so a fork made
 * from its source's image gets its own range's maps written there. Done by
 * Debian's pycriu (the criu package's image library, as crit uses it), run
 * as a child. Calls lib/. Blocking (a Python start, a fraction of a second). */
#ifndef E2B_BACKEND_RUNTIME_CHECKPOINT_IDS_H
#define E2B_BACKEND_RUNTIME_CHECKPOINT_IDS_H

#include <sys/types.h>

struct err;

/* Rewrites every userns image in dir: each extent's host ids move from the
 * range at from to the range at to (count ids each). 0, or -1 with err
 * (status 0): an extent outside the range, pycriu missing or failing. */
int runtime_checkpoint_shift_ids(const char *dir, uid_t from, uid_t to, unsigned long count, struct err *err);

#endif
