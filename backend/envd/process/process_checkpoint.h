/* A sandbox's commands across a checkpoint (registry_pause.h): before the
 * dump, the backend's ends of their pipes and ptys are parked in the init
 * (runtime_spawn_park), so that both ends are inside the tree CRIU dumps;
 * after a restore they come back (runtime_spawn_unpark) in place of the old
 * ones, and each command's streams carry on. After a failed dump the parked
 * copies are dropped. A restored sandbox whose commands this backend does
 * not know (it was restarted) gets its parked descriptors closed. */
#ifndef E2B_BACKEND_PROCESS_CHECKPOINT_H
#define E2B_BACKEND_PROCESS_CHECKPOINT_H

#include "registry/registry.h"

struct proc_manager;

void process_checkpoint(struct proc_manager *pm, struct sandbox *sb, enum registry_checkpoint_step step);

#endif
