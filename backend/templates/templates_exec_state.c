/* A build executor's state and the moves every step makes on it
 * (templates_exec_state.h). */
#include "templates/templates_exec_state.h"

#include "envd/process/process_run.h"
#include "registry/registry.h"
#include "templates/templates.h"
#include "templates/templates_accounts.h"
#include "templates/templates_exec.h"
#include "templates/templates_image.h"
#include "templates/templates_records.h"

#include <cJSON.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void unlink_exec(struct exec *e)
{
	for (struct exec **pp = (struct exec **)&e->env->running; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			return;
		}
	}
}

void exec_state_mirror_layers(struct exec *e)
{
	cJSON_Delete(e->b->config.layers);
	e->b->config.layers = cJSON_Duplicate(e->cfg.layers, true);
}

static void push_layer(struct exec *e, const char *id)
{
	cJSON_AddItemToArray(e->cfg.layers, cJSON_CreateString(id));
	exec_state_mirror_layers(e);
}

const char *exec_state_top_layer(const struct exec *e)
{
	int n = cJSON_GetArraySize(e->cfg.layers);
	return n ? cJSON_GetStringValue(cJSON_GetArrayItem(e->cfg.layers, n - 1)) : "";
}

void exec_state_drop_sandbox(struct exec *e)
{
	struct sandbox *sb = e->sb;
	e->sb = NULL; /* before the kill: the removing hook must not take it for a loss */
	if (sb)
		registry_kill(e->env->reg, sb);
}

void exec_state_finish(struct exec *e, const char *reason)
{
	struct template_build *b = e->b;
	if (e->sealing) {
		free(e->stop);
		e->stop = strdup(reason ? reason : "out of memory");
		return;
	}
	unlink_exec(e);
	if (e->pull)
		templates_image_cancel(e->pull);
	if (e->proc)
		process_run_detach(e->proc);
	if (e->sb)
		registry_kill(e->env->reg, e->sb);
	if (!b) {
		/* Cancelled while sealing (templates_exec_cancel): the build is gone. */
	} else if (reason) {
		build_log(b, "error", e->step_name, "%s", reason);
		build_finish(b, e->step_name, reason);
	} else {
		templates_records_build_ready(e->env->state_root, e->env->catalog, b, &e->cfg);
	}
	if (reason)
		templates_stack_collect_soon(); /* its layers may be unused now */
	if (b)
		b->exec = NULL;
	build_config_clear(&e->cfg);
	if (e->tick)
		event_free(e->tick);
	cJSON_Delete(e->request);
	free(e->what);
	free(e->failure);
	free(e->stop);
	free(e);
}

bool exec_state_ended(struct exec *e, const char *failed)
{
	e->sealing = false;
	if (!e->stop && !failed)
		return false;
	char reason[900];
	snprintf(reason, sizeof reason, "%s", e->stop ? e->stop : failed);
	free(e->stop);
	e->stop = NULL;
	exec_state_finish(e, reason);
	return true;
}

void exec_state_schedule(struct exec *e)
{
	struct timeval now = {0, 0};
	evtimer_add(e->tick, &now);
}

void exec_state_took_layer(struct exec *e, const char *id)
{
	push_layer(e, id);
	e->key[0] = '\0';
	exec_state_drop_sandbox(e); /* its stack is one layer short now */
	if (e->provision) {
		e->provision = false;
		free(e->cfg.user);
		e->cfg.user = strdup(TEMPLATES_ACCOUNT_USER);
	} else {
		e->i++;
	}
	exec_state_schedule(e);
}
