/* Starting a command's child in the init's own memory (clone(2) with
 * CLONE_VM, as posix_spawn's vfork does, but without the wait): no copy of
 * the init's page tables, which a paging-based hypervisor makes costly (a
 * fork and its exec cost about twice a clone and its exec).
 *
 * The init does not wait for the child's execve (CLONE_VFORK would): a
 * process of the sandbox running as the command's user could stop the
 * child between its setuid and its execve, and the init with it. Instead
 * the child runs on a stack of its own, reads what the init wrote before
 * the clone, and the kernel clears a word when the child leaves the init's
 * memory (CLONE_CHILD_CLEARTID: at its execve or its end); only then is
 * that memory freed or used again. A child stopped before its execve holds
 * its own area, nothing else. */
#ifndef E2B_INIT_CLONE_H
#define E2B_INIT_CLONE_H

#include "init_child.h"

#include <stdbool.h>
#include <sys/types.h>

struct init_clone;

/* Starts the child of args (its descriptors and flags; the command is read
 * here from the memfd blob). The child's pid, *out set; or -1 with errno
 * (EINVAL: the blob is not a whole command). */
pid_t init_clone_start(struct init_clone **out, int blob, const struct init_child_args *args);

/* Whether the child may still run in the init's memory. */
bool init_clone_running(const struct init_clone *c);

/* Frees or keeps for the next child what c holds; only once
 * init_clone_running says false. */
void init_clone_release(struct init_clone *c);

#endif
