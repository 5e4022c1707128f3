/* Moving a kept sandbox's files to another id range: when the range its
 * disk's files carry is taken (by another backend) by the time it comes
 * back, it gets a free one and every file on its disk is given the same id
 * in the new range (uid and gid; ids outside the pool are left alone). In
 * place, on the sandbox's disk before its overlay is mounted (nothing of
 * the sandbox runs then); the cost grows with what the sandbox wrote.
 * Calls runtime_ids.c and the kernel. */
#ifndef E2B_BACKEND_RUNTIME_SHIFT_H
#define E2B_BACKEND_RUNTIME_SHIFT_H

#include "runtime/runtime_ids.h"

/* Every entry below dir (not following links, not crossing mounts) gets
 * the ids of to. 0, or -1 with errno. */
int runtime_shift_ids(const char *dir, const struct runtime_ids *to);

#endif
