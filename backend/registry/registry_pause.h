/* How registry_pause treats a sandbox's processes: checkpointed (CRIU,
 * runtime_checkpoint.h) when memory is kept and the runtime can, frozen
 * when it cannot (the reason kept in sb->pause_why), or ended with only the
 * files kept. Fires the hooks' checkpoint steps around it. Private to
 * registry/. */
#ifndef E2B_BACKEND_REGISTRY_PAUSE_H
#define E2B_BACKEND_REGISTRY_PAUSE_H

#include "registry/registry.h"

#include <stdbool.h>
#include <stddef.h>

/* Sets sb->pause_kind and sb->pause_why. */
void registry_pause_processes(const struct registry_hooks *hooks, size_t nhooks, struct sandbox *sb,
	bool memory);
/* A running sandbox's processes dumped into dir for its forks, while they
 * go on (runtime_checkpoint_copy, between the hooks' BEFORE and FAILED
 * steps). 0, or -1 with err (status 0) when it cannot be checkpointed. */
int registry_pause_copy(const struct registry_hooks *hooks, size_t nhooks, struct sandbox *sb,
	const char *dir, struct err *err);
/* A sandbox brought back from its record, cold: a complete image makes it
 * a checkpointed one (whatever the record says: a crash may have come
 * between the two); else its processes are gone, whatever its last pause
 * was (a partial dump is removed). */
void registry_pause_after_restart(struct sandbox *sb);
/* Fires step on every set of hooks that has a checkpoint hook, in order. */
void registry_pause_step(const struct registry_hooks *hooks, size_t nhooks, struct sandbox *sb,
	enum registry_checkpoint_step step);

#endif
