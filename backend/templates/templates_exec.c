/* The build executor (templates_exec.h). The steps run one after the
 * other, each started from the loop (never from inside a process callback).
 * A step that changes files (RUN, COPY, WORKDIR) is looked up in the cache
 * first (its key: templates_stack_key); on a miss it runs in a build
 * sandbox made from the stack so far, which is then frozen and sealed into
 * the step's layer and removed: the next step that runs gets a fresh
 * sandbox on the grown stack, so each layer holds one step's changes. A
 * stack at its depth limit is squashed first (templates_squash.h). The
 * executor's state and the moves every step makes on it (its stack, its
 * tick, its end) are templates_exec_state.h's. */
#include "templates/templates_exec.h"

#include "envd/process/process_run.h"
#include "lib/err.h"
#include "lib/text.h"
#include "registry/registry.h"
#include "store/store_helper.h"
#include "store/store_layers.h"
#include "templates/templates.h"
#include "templates/templates_accounts.h"
#include "templates/templates_exec_state.h"
#include "templates/templates_files.h"
#include "templates/templates_image.h"
#include "templates/templates_squash.h"
#include "templates/templates_stack.h"
#include "templates/templates_steps.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* A checked step's argument k, "" when it has fewer. */
static const char *arg(const cJSON *step, int k)
{
	const cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(step, "args"), k);
	return a ? a->valuestring : "";
}

static void on_output(void *ctx, enum proc_output_kind kind, const uint8_t *data, size_t len)
{
	struct exec *e = ctx;
	build_log_output(e->b, e->step_name, &e->lines, kind == PROC_OUT_STDERR, data, len);
}

static void on_ended(void *ctx, int wait_status)
{
	struct exec *e = ctx;
	e->proc = NULL;
	build_log_flush(e->b, e->step_name, &e->lines);
	bool exited = WIFEXITED(wait_status), ok = exited && WEXITSTATUS(wait_status) == 0;
	char reason[1024] = "out of memory";
	if (!ok)
		snprintf(reason, sizeof reason, "failed to run command '%.700s': %s %d", e->what,
			exited ? "exit status" : "signal",
			exited                             ? WEXITSTATUS(wait_status)
				: WIFSIGNALED(wait_status) ? WTERMSIG(wait_status)
							   : 0);
	if (ok &&
		(!e->workdir_step ||
			templates_steps_apply(&e->cfg, cJSON_GetArrayItem(e->steps, e->i)) == 0)) {
		if (!e->key[0]) /* else the tick seals the step's layer first */
			e->i++;
	} else {
		e->i = -1 - e->i; /* failed: the tick reports it */
		free(e->failure);
		e->failure = strdup(reason);
	}
	exec_state_schedule(e);
}

static const struct process_observer observer = {.output = on_output, .ended = on_ended};

/* command as user with shell -c, or (shell NULL) E2B's bash -l -c. */
static int run(struct exec *e, const char *user, const char *shell, const char *command, const char *shown)
{
	free(e->what);
	e->what = strdup(shown);
	struct process_run_spec spec = {.sb = e->sb,
		.user = user,
		.cwd = e->provision ? "/" : e->cfg.workdir,
		.command = command,
		.envs = e->cfg.envs,
		.shell = shell};
	struct err why;
	e->proc = process_run(e->env->pm, &spec, &observer, e, &why);
	if (!e->proc) {
		char reason[1400];
		/* E2B's builder: Start's error as its command stream ends with it */
		snprintf(reason, sizeof reason, "failed to run command '%.700s': command failed: %.599s",
			shown, why.msg);
		exec_state_finish(e, reason);
		return -1;
	}
	return 0;
}

static void step_copy(struct exec *e, const cJSON *step)
{
	char shown[1200];
	struct err why;
	snprintf(shown, sizeof shown, "COPY %.500s %.500s", arg(step, 0), arg(step, 1));
	char *script = templates_files_copy_command(e->sb, step, e->cfg.user ? e->cfg.user : "user",
		e->cfg.workdir, &why);
	if (!script) {
		exec_state_finish(e, why.msg);
		return;
	}
	run(e, "root", NULL, script, shown);
	free(script);
}

static void step_workdir(struct exec *e, const char *path)
{
	char *abs = templates_steps_workdir_abs(e->cfg.workdir, path);
	char *cmd = abs ? templates_steps_workdir_script(abs, e->cfg.user ? e->cfg.user : "user") : NULL;
	free(abs);
	if (!cmd) {
		exec_state_finish(e, "out of memory");
		return;
	}
	e->workdir_step = true; /* once it ran, the configuration has the directory */
	char *saved = e->cfg.workdir;
	e->cfg.workdir = NULL; /* mkdir from home: the new directory may not exist yet */
	run(e, "root", NULL, cmd, cmd);
	e->cfg.workdir = saved;
	free(cmd);
}

/* A file step found in the cache: its layer joins the stack, nothing runs. */
static void step_cached(struct exec *e, const cJSON *s, const char *type, const char *args)
{
	build_log(e->b, "info", e->step_name, "CACHED [builder %d/%d] %s%s", e->i + 1, e->n, type, args);
	if (templates_steps_apply(&e->cfg, s) != 0) {
		exec_state_finish(e, "out of memory");
		return;
	}
	exec_state_took_layer(e, e->key);
}

/* A miss whose steps lead, with their keys alone, to a squashed stack in
 * the store (templates_squash_ahead, which logged them): cached, up to it. */
static void cached_ahead(struct exec *e, int next)
{
	e->i = next;
	exec_state_mirror_layers(e);
	e->key[0] = '\0';
	exec_state_drop_sandbox(e);
	exec_state_schedule(e);
}

/* A step that changes files: its cache key; true when it needs no run (its
 * layer came from the cache, or the steps from it up to a squash did). */
static bool settled_before_run(struct exec *e, const cJSON *s, const char *type, const char *args)
{
	templates_stack_key(e->cfg.layers, s, &e->cfg, e->key);
	bool forced = e->force || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "force"));
	int next;
	if (!forced && store_layer_find(e->key)) {
		step_cached(e, s, type, args);
		return true;
	}
	if (!forced && templates_squash_ahead(e->steps, e->i, e->force, &e->cfg, e->b, &next)) {
		cached_ahead(e, next);
		return true;
	}
	return false;
}

/* USER: an account that exists is only remembered; a missing one is made
 * first, as E2B's builder does (templates_accounts.h), in a step that
 * changes files and so is cached like one. */
static void step_user(struct exec *e, const cJSON *s, const char *type, const char *args)
{
	const char *name = arg(s, 0);
	struct err why;
	int missing = templates_accounts_missing(e->sb, name, &why);
	if (missing < 0) {
		exec_state_finish(e, why.msg);
		return;
	}
	if (missing && settled_before_run(e, s, type, args))
		return;
	free(e->cfg.user);
	e->cfg.user = strdup(name);
	if (!missing) { /* nothing to run, no layer */
		e->i++;
		exec_state_schedule(e);
		return;
	}
	char *cmd = templates_accounts_script(name);
	char *shown = text_printf("useradd --create-home %s", name);
	if (cmd && shown)
		run(e, "root", TEMPLATES_ACCOUNTS_SHELL, cmd, shown); /* then the tick seals its layer */
	else
		exec_state_finish(e, "out of memory");
	free(cmd);
	free(shown);
}

/* The squash of the stack is over (templates_squash_start). */
static void squashed(void *ctx, const struct err *err, const char *line)
{
	struct exec *e = ctx;
	struct err failed;
	if (err)
		err_set(&failed, err->status, "cannot squash the template's layers: %s", err->msg);
	if (exec_state_ended(e, err ? failed.msg : NULL))
		return;
	build_log(e->b, "info", e->step_name, "%s", line);
	exec_state_mirror_layers(e);
	exec_state_schedule(e);
}

/* The stack is at its depth limit: merged into [bottom, merged] first. */
static void squash(struct exec *e)
{
	struct err why;
	exec_state_drop_sandbox(e); /* it stands on the old stack */
	e->sealing = true;
	if (templates_squash_start(e->env->base, e->cfg.layers, squashed, e, &why) != 0)
		squashed(e, &why, NULL);
}

static void step(struct exec *e)
{
	const cJSON *s = cJSON_GetArrayItem(e->steps, e->i);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "type"));
	snprintf(e->step_name, sizeof e->step_name, "%d", e->i + 1);
	e->workdir_step = false;
	char args[600];
	templates_steps_describe(s, args, sizeof args);
	if (strcmp(type, "ENV") != 0 && templates_squash_due(e->cfg.layers, false)) {
		squash(e);
		return;
	}
	if (strcmp(type, "ENV") != 0 && strcmp(type, "USER") != 0 && settled_before_run(e, s, type, args))
		return;
	build_log(e->b, "info", e->step_name, "[builder %d/%d] %s%s", e->i + 1, e->n, type, args);
	struct err why;
	if (!e->sb && !(e->sb = templates_stack_sandbox(e->env->reg, &e->cfg, e->b, &why))) {
		exec_state_finish(e, why.msg);
		return;
	}
	if (strcmp(type, "RUN") == 0) {
		const char *user = arg(s, 1)[0] ? arg(s, 1) : (e->cfg.user ? e->cfg.user : "user");
		run(e, user, NULL, arg(s, 0), arg(s, 0));
	} else if (strcmp(type, "COPY") == 0) {
		step_copy(e, s);
	} else if (strcmp(type, "WORKDIR") == 0) {
		step_workdir(e, arg(s, 0));
	} else if (strcmp(type, "ENV") == 0) {
		if (templates_steps_apply(&e->cfg, s) != 0) {
			exec_state_finish(e, "out of memory");
			return;
		}
		e->i++;
		exec_state_schedule(e);
	} else {
		step_user(e, s, type, args);
	}
}

/* An image whose /etc/passwd lacks E2B's account gets it before the
 * steps, as E2B provisions every image (templates_accounts.h): a step that
 * changes files, cached like one. */
static void provision(struct exec *e)
{
	cJSON *s = templates_accounts_provision_step();
	struct err why;
	if (!s) {
		exec_state_finish(e, "out of memory");
		return;
	}
	templates_stack_key(e->cfg.layers, s, &e->cfg, e->key);
	cJSON_Delete(s);
	if (!e->force && store_layer_find(e->key)) {
		build_log(e->b, "info", e->step_name, "CACHED Provisioning: %s", TEMPLATES_PROVISION_SHOWN);
		exec_state_took_layer(e, e->key);
	} else if (!e->sb && !(e->sb = templates_stack_sandbox(e->env->reg, &e->cfg, e->b, &why))) {
		exec_state_finish(e, why.msg);
	} else if (templates_accounts_can_provision(e->sb, &why) != 0) {
		build_log(e->b, "warn", e->step_name,
			"Provisioning: skipped, %s: the template's user stays root", why.msg);
		e->key[0] = '\0';
		e->provision = false;
		exec_state_schedule(e);
	} else {
		build_log(e->b, "info", e->step_name, "Provisioning: %s", TEMPLATES_PROVISION_SHOWN);
		run(e, "root", TEMPLATES_ACCOUNTS_SHELL, templates_accounts_provision_script(),
			TEMPLATES_PROVISION_SHOWN);
	}
}

/* The seal of the step's layer is over (templates_stack_seal). */
static void sealed(void *ctx, const struct store_layer *layer, const struct err *err)
{
	struct exec *e = ctx;
	struct err failed;
	if (!layer)
		err_set(&failed, err ? err->status : 0, "cannot keep the files of step %s: %s", e->step_name,
			err ? err->msg : "");
	if (e->sb_lost && layer)
		store_layer_remove(layer->id, NULL, NULL); /* copied while its sandbox went */
	if (exec_state_ended(e, layer ? NULL : failed.msg))
		return;
	build_log(e->b, "debug", e->step_name, "Layer %s", layer->id);
	exec_state_took_layer(e, layer->id);
}

static void seal_step(struct exec *e)
{
	struct err why;
	e->sealing = true;
	if (templates_stack_seal(e->sb, e->key, exec_state_top_layer(e), sealed, e, &why) == 0)
		return;
	e->sealing = false;
	err_wrap(&why, "cannot keep the files of step %s", e->step_name);
	exec_state_finish(e, why.msg);
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
	(void)fd;
	(void)what;
	struct exec *e = ctx;
	if (e->i < 0) { /* a command failed */
		char *reason = e->failure;
		e->failure = NULL;
		exec_state_finish(e, reason ? reason : "out of memory");
		free(reason);
		return;
	}
	if (e->key[0]) {
		seal_step(e);
		return;
	}
	if (e->provision && templates_squash_due(e->cfg.layers, false))
		squash(e); /* an image as deep as a stack may be */
	else if (e->provision)
		provision(e);
	else if (e->i < e->n)
		step(e);
	else if (templates_squash_due(e->cfg.layers, true))
		squash(e); /* an image deeper than a stack may be */
	else
		exec_state_finish(e, NULL);
}

/* The base image is pulled (templates_image.h). */
static void image_ready(void *ctx, const struct err *err, bool lacks_user)
{
	struct exec *e = ctx;
	e->pull = NULL;
	e->provision = lacks_user;
	if (err) {
		exec_state_finish(e, err->msg);
		return;
	}
	exec_state_mirror_layers(e);
	exec_state_schedule(e);
}

int templates_exec_start(struct templates_env *env, struct template *tpl, struct template_build *b,
	const cJSON *request, struct err *err)
{
	(void)tpl;
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(request, "steps");
	if (templates_steps_check(steps, err) != 0 || templates_image_check(request, err) != 0 ||
		templates_steps_check_strings(request, err) != 0)
		return -1;
	struct exec *e = calloc(1, sizeof *e);
	if (!e || !(e->request = cJSON_Duplicate(request, true)) || !(e->cfg.envs = cJSON_CreateObject()) ||
		!(e->cfg.user = strdup("user")) || !(e->tick = evtimer_new(env->base, on_tick, e))) {
		if (e) {
			cJSON_Delete(e->request);
			build_config_clear(&e->cfg);
			free(e);
		}
		err_set(err, 0, "out of memory");
		return -1;
	}
	e->env = env;
	e->b = b;
	e->steps = cJSON_GetObjectItemCaseSensitive(e->request, "steps");
	e->n = cJSON_GetArraySize(e->steps);
	e->next = env->running;
	env->running = e;
	b->exec = e;
	b->status = BUILD_BUILDING;
	snprintf(e->step_name, sizeof e->step_name, "base");
	build_log(b, "info", "base", "Building template %s, build %s", b->template_id, b->id);
	struct err reason;
	e->force = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e->request, "force"));
	if (templates_steps_start_cmds(e->request, &e->cfg) != 0) {
		exec_state_finish(e, "out of memory");
		return 0;
	}
	if (templates_stack_wants_image(e->request)) {
		e->pull = templates_image_start(b, e->request, &e->cfg, image_ready, e, &reason);
		templates_image_forget_credentials(e->request); /* the pull has its own copy */
		if (!e->pull)
			exec_state_finish(e, reason.msg);
		return 0;
	}
	if (templates_stack_parent(e->env->catalog, e->request, &e->cfg, &reason) != 0) {
		exec_state_finish(e, reason.msg);
		return 0;
	}
	exec_state_mirror_layers(e);
	build_log(b, "info", "base", "Base: template '%s'", e->cfg.base ? e->cfg.base : "base");
	exec_state_schedule(e);
	return 0;
}

void templates_exec_cancel(struct templates_env *env, struct template_build *b)
{
	for (struct exec *e = env->running; e; e = e->next) {
		if (e->b != b)
			continue;
		if (e->sealing) {
			/* The build ends now (its template may be freed next); the
			 * executor once the seal is over, or the squash, killed here. */
			build_log(b, "error", e->step_name, "the build was cancelled");
			build_finish(b, e->step_name, "the build was cancelled");
			b->exec = NULL;
			e->b = NULL;
			templates_squash_cancel(e);
		}
		exec_state_finish(e, "the build was cancelled");
		return;
	}
}

void templates_exec_sandbox_removing(void *ctx, struct sandbox *sb)
{
	struct templates_env *env = ctx;
	if (sb->layer_count)
		templates_stack_collect_soon(); /* once it is gone, its layers may be unused */
	for (struct exec *e = env->running; e; e = e->next) {
		if (e->sb == sb && e->sealing) {
			e->sb = NULL;
			e->sb_lost = true;
			exec_state_finish(e, "the build sandbox was removed");
			return;
		}
		if (e->sb == sb) {
			e->sb = NULL; /* being removed already */
			if (e->proc)
				process_run_detach(e->proc);
			e->proc = NULL;
			/* Not from inside the registry's removal: the tick reports it. */
			free(e->failure);
			e->failure = strdup("the build sandbox was removed");
			e->i = -1 - (e->i < 0 ? 0 : e->i);
			exec_state_schedule(e);
			return;
		}
	}
}

void templates_exec_shutdown(struct templates_env *env)
{
	for (struct exec *e = env->running; e; e = e->next)
		templates_squash_cancel(e); /* a squash is not waited for */
	store_helper_wait_all();            /* seals end first: their sandboxes must stay until then */
	while (env->running)
		exec_state_finish(env->running, "the backend stopped");
}
