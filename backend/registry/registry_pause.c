/* The processes' side of a pause (registry_pause.h). */
#include "registry/registry_pause.h"

#include "lib/err.h"
#include "runtime/runtime.h"
#include "runtime/runtime_checkpoint.h"
#include "runtime/runtime_remove.h"

#include <stdio.h>
#include <string.h>

void registry_pause_step(const struct registry_hooks *hooks, size_t nhooks, struct sandbox *sb,
	enum registry_checkpoint_step step)
{
	for (size_t k = 0; k < nhooks; k++)
		if (hooks[k].checkpoint)
			hooks[k].checkpoint(hooks[k].ctx, sb, step);
}

static void freeze(struct sandbox *sb)
{
	sb->pause_kind = SANDBOX_PAUSE_FREEZE;
	if (runtime_sandbox_freeze(sb, true) != 0)
		fprintf(stderr, "sandbox %s: could not freeze it completely\n", sb->id);
}

void registry_pause_processes(const struct registry_hooks *hooks, size_t nhooks, struct sandbox *sb,
	bool memory)
{
	sb->pause_why[0] = 0;
	if (!memory) {
		/* Its files only: the processes end as at a restart. */
		sb->pause_kind = SANDBOX_PAUSE_FILES;
		registry_pause_step(hooks, nhooks, sb, REGISTRY_CKPT_STOPPED);
		runtime_sandbox_stop(sb);
		return;
	}
	if (!runtime_isolated()) {
		snprintf(sb->pause_why, sizeof sb->pause_why,
			"the backend runs without isolation; a "
			"checkpoint needs full isolation (root)");
		freeze(sb);
		return;
	}
	struct err why;
	if (runtime_checkpoint_allowed(sb, &why) != 0) {
		snprintf(sb->pause_why, sizeof sb->pause_why, "%.239s", why.msg);
		freeze(sb);
		return;
	}
	registry_pause_step(hooks, nhooks, sb, REGISTRY_CKPT_BEFORE);
	int rc = runtime_checkpoint_dump(sb, &why);
	if (rc == 0) {
		sb->pause_kind = SANDBOX_PAUSE_CHECKPOINT;
		return;
	}
	fprintf(stderr, "sandbox %s: no checkpoint (%.199s)\n", sb->id, why.msg);
	if (rc == -2) {
		/* The dump ended its processes but its image could not be kept. */
		snprintf(sb->pause_why, sizeof sb->pause_why, "%.199s; its processes have ended", why.msg);
		sb->pause_kind = SANDBOX_PAUSE_FILES;
		registry_pause_step(hooks, nhooks, sb, REGISTRY_CKPT_STOPPED);
		return;
	}
	/* Still running: back as it was, then frozen as everywhere else. */
	registry_pause_step(hooks, nhooks, sb, REGISTRY_CKPT_FAILED);
	snprintf(sb->pause_why, sizeof sb->pause_why, "%.199s", why.msg);
	freeze(sb);
}

int registry_pause_copy(const struct registry_hooks *hooks, size_t nhooks, struct sandbox *sb,
	const char *dir, struct err *err)
{
	if (!runtime_isolated())
		return err_set(err, 0,
			"the backend runs without isolation; a checkpoint needs full isolation (root)");
	if (runtime_checkpoint_allowed(sb, err) != 0)
		return -1;
	registry_pause_step(hooks, nhooks, sb, REGISTRY_CKPT_BEFORE);
	int rc = runtime_checkpoint_copy(sb, dir, err);
	/* It ran on either way: back as it was. */
	registry_pause_step(hooks, nhooks, sb, REGISTRY_CKPT_FAILED);
	return rc;
}

void registry_pause_after_restart(struct sandbox *sb)
{
	if (runtime_isolated() && runtime_checkpoint_present(sb)) {
		sb->pause_kind = SANDBOX_PAUSE_CHECKPOINT;
		sb->pause_why[0] = 0;
		return;
	}
	runtime_checkpoint_discard(sb);
	if (sb->pause_kind == SANDBOX_PAUSE_FILES)
		return;
	snprintf(sb->pause_why, sizeof sb->pause_why,
		"the backend stopped while its processes were %s; "
		"only its files outlived it",
		sb->pause_kind == SANDBOX_PAUSE_FREEZE ? "frozen" : "running");
	sb->pause_kind = SANDBOX_PAUSE_FILES;
}
