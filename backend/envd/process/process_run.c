/* Commands the backend runs in a sandbox for itself (process_run.h). */
#include "envd/process/process_run.h"

#include "envd/process/process_cwd.h"
#include "envd/process/process_log.h"
#include "envd/process/process_manager.h"
#include "envd/process/process_spawn.h"
#include "http/http_connect.h"
#include "lib/err.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_users.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct proc *process_run(struct proc_manager *pm, const struct process_run_spec *spec,
	const struct process_observer *obs, void *ctx, struct err *err)
{
	struct sandbox_user account;
	if (strlen(spec->user) >= 64 || runtime_user_resolve(spec->sb, spec->user, &account) != 0) {
		err_set(err, CONNECT_UNAUTHENTICATED, "%s: invalid username: '%.64s'",
			connect_code_name(CONNECT_UNAUTHENTICATED), spec->user);
		return NULL;
	}
	const char *user_name = runtime_isolated() ? account.name : pm->user_name;
	char *cwd = process_resolve_cwd(spec->cwd, account.home, user_name, err);
	cJSON *args = cJSON_CreateArray();
	if (!cwd || !args) {
		if (cwd)
			err_set(err, CONNECT_INTERNAL, "out of memory");
		else
			err_wrap(err, "%s", connect_code_name(err->status));
		free(cwd);
		cJSON_Delete(args);
		return NULL;
	}
	const char *shell = spec->shell ? spec->shell : "/bin/bash";
	if (!spec->shell)
		cJSON_AddItemToArray(args, cJSON_CreateString("-l"));
	cJSON_AddItemToArray(args, cJSON_CreateString("-c"));
	cJSON_AddItemToArray(args, cJSON_CreateString(spec->command));
	struct proc_spawn sp_spec = {
		.cmd = shell,
		.args = args,
		.sandbox_envs = spec->sb->env_vars,
		.request_envs = spec->envs,
		.home = account.home,
		.user = user_name,
		.sb = spec->sb,
		.account = &account,
		.path_env = runtime_isolated() ? SANDBOX_PATH : pm->path_env,
		.cwd = cwd,
		.stdin_pipe = false,
	};
	struct proc_spawned sp;
	int rc = process_spawn_start(&sp_spec, &sp, err);
	free(cwd);
	if (rc != 0) {
		cJSON_Delete(args);
		err_wrap(err, "%s", connect_code_name(err->status));
		return NULL;
	}
	/* List shows it like any process: {cmd, args}. */
	cJSON *config = cJSON_CreateObject();
	if (config) {
		cJSON_AddStringToObject(config, "cmd", shell);
		cJSON_AddItemToObject(config, "args", args);
	} else {
		cJSON_Delete(args);
	}
	struct proc *p = process_register(pm, spec->sb, &sp, false, config, NULL, 0);
	if (!p) {
		err_set(err, CONNECT_INTERNAL, "out of memory");
		return NULL;
	}
	p->observer = obs;
	p->observer_ctx = ctx;
	if (spec->log && process_log_output_on(p) == 0)
		process_log_start(p);
	process_update_reading(p);
	return p;
}

void process_run_detach(struct proc *p)
{
	p->observer = NULL;
	p->observer_ctx = NULL;
	process_update_reading(p); /* nobody may take its output now */
}
