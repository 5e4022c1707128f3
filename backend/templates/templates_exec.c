/* The build executor (templates_exec.h). One build sandbox per build; the
 * steps run in it one after the other, each started from the loop (never
 * from inside a process callback). */
#include "templates/templates_exec.h"

#include "envd/process/process_run.h"
#include "lib/text.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_users.h"
#include "templates/templates.h"
#include "templates/templates_files.h"
#include "templates/templates_steps.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUILD_SANDBOX_TIMEOUT_S 86400
#define LINE_MAX_BYTES 4000

struct exec {
	struct exec *next;
	struct templates_env *env;
	struct template_build *b;
	cJSON *request;
	const cJSON *steps;
	int n, i;
	struct sandbox *sb;
	struct proc *proc;
	struct event *tick;
	char *what;                /* the running step's command, for its failure message */
	bool workdir_step;         /* the running command makes the WORKDIR */
	char *pending_workdir;
	char line[2][LINE_MAX_BYTES + 1];
	size_t line_len[2];
	char step_name[16];
	struct template_config cfg;
};

static const char *arg(const cJSON *step, int k)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(step, "args"), k)->valuestring;
}

static int nargs(const cJSON *step)
{
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(step, "args"));
}

static void unlink_exec(struct exec *e)
{
	for (struct exec **pp = (struct exec **)&e->env->running; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			return;
		}
	}
}

/* Ends the build (reason NULL: ready) and frees the executor. */
static void finish(struct exec *e, const char *reason)
{
	struct template_build *b = e->b;
	unlink_exec(e);
	if (e->proc)
		process_run_detach(e->proc);
	if (e->sb)
		registry_kill(e->env->reg, e->sb);
	if (reason) {
		build_log(b, "error", e->step_name, "%s", reason);
		build_finish(b, e->step_name, reason);
	} else {
		build_config_clear(&b->config);
		b->config = e->cfg;
		memset(&e->cfg, 0, sizeof e->cfg);
		struct template *tpl = templates_find(e->env->catalog, b->template_id);
		const cJSON *t;
		bool tagged = false;
		cJSON_ArrayForEach(t, b->tags) {
			if (tpl && cJSON_IsString(t))
				tagged |= templates_tag(tpl, t->valuestring, b->id) == 0;
		}
		if (tpl && !tagged)
			templates_tag(tpl, TEMPLATES_DEFAULT_TAG, b->id);
		build_log(b, "info", "finalize", "Build finished: template %s, build %s", b->template_id, b->id);
		build_finish(b, NULL, NULL);
	}
	b->exec = NULL;
	build_config_clear(&e->cfg);
	if (e->tick)
		event_free(e->tick);
	cJSON_Delete(e->request);
	free(e->what);
	free(e->pending_workdir);
	free(e);
}

static void schedule(struct exec *e)
{
	struct timeval now = {0, 0};
	evtimer_add(e->tick, &now);
}

static void flush_line(struct exec *e, int k, bool all)
{
	if (e->line_len[k] == 0 && !all)
		return;
	if (e->line_len[k] > 0) {
		e->line[k][e->line_len[k]] = '\0';
		build_log(e->b, k ? "warn" : "info", e->step_name, "%s", e->line[k]);
	}
	e->line_len[k] = 0;
}

static void on_output(void *ctx, enum proc_output_kind kind, const uint8_t *data, size_t len)
{
	struct exec *e = ctx;
	int k = kind == PROC_OUT_STDERR;
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n' || e->line_len[k] == LINE_MAX_BYTES) {
			if (data[i] == '\n' && e->line_len[k] == 0) {
				build_log(e->b, k ? "warn" : "info", e->step_name, "%s", "");
				continue;
			}
			flush_line(e, k, false);
			if (data[i] == '\n')
				continue;
		}
		e->line[k][e->line_len[k]++] = (char)data[i];
	}
}

static int status_code(int ws)
{
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

static void on_ended(void *ctx, int wait_status)
{
	struct exec *e = ctx;
	e->proc = NULL;
	flush_line(e, 0, false);
	flush_line(e, 1, false);
	if (status_code(wait_status) != 0) {
		char reason[1024];
		if (WIFEXITED(wait_status))
			snprintf(reason, sizeof reason, "failed to run command '%.700s': exit status %d", e->what,
				WEXITSTATUS(wait_status));
		else
			snprintf(reason, sizeof reason, "failed to run command '%.700s': signal %d", e->what,
				WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
		e->i = -1 - e->i; /* failed: the tick reports it */
		free(e->pending_workdir);
		e->pending_workdir = strdup(reason);
		schedule(e);
		return;
	}
	if (e->workdir_step) {
		free(e->cfg.workdir);
		e->cfg.workdir = e->pending_workdir;
		e->pending_workdir = NULL;
	}
	e->i++;
	schedule(e);
}

static const struct process_observer observer = {.output = on_output, .ended = on_ended};

static int run(struct exec *e, const char *user, const char *command, const char *shown)
{
	free(e->what);
	e->what = strdup(shown);
	struct process_run_spec spec = {.sb = e->sb, .user = user, .cwd = e->cfg.workdir,
		.command = command, .envs = e->cfg.envs};
	char why[600];
	e->proc = process_run(e->env->pm, &spec, &observer, e, why, sizeof why);
	if (!e->proc) {
		char reason[1400];
		snprintf(reason, sizeof reason, "failed to run command '%.700s': %s", shown, why);
		finish(e, reason);
		return -1;
	}
	return 0;
}

/* The step's uploaded tar, put in the sandbox's /tmp for its root. */
static int place_tar(struct exec *e, const char *hash, char *inside, size_t len)
{
	snprintf(inside, len, "/tmp/.e2b-files-%.16s.tar.gz", hash);
	int in = open(templates_files_path(hash), O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = runtime_isolated() ? runtime_open_in_root(e->sb, inside, O_WRONLY | O_CREAT | O_TRUNC)
		: -1;
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (n < 0 || fchown(out, runtime_host_id(e->sb, 0), runtime_host_id(e->sb, 0)) != 0)
		rc = -1;
	close(in);
	close(out);
	return rc;
}

static void step_copy(struct exec *e, const cJSON *step)
{
	const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "filesHash"));
	char inside[128], shown[1200];
	snprintf(shown, sizeof shown, "COPY %.500s %.500s", arg(step, 0), arg(step, 1));
	if (!templates_files_present(hash)) {
		char reason[1400];
		snprintf(reason, sizeof reason, "%s: the files of hash %.64s were not uploaded", shown, hash);
		finish(e, reason);
		return;
	}
	if (place_tar(e, hash, inside, sizeof inside) != 0) {
		char reason[1400];
		snprintf(reason, sizeof reason, "%s: cannot put the files in the build sandbox: %s", shown,
			strerror(errno));
		finish(e, reason);
		return;
	}
	const char *user = nargs(step) > 2 && arg(step, 2)[0] ? arg(step, 2)
		: (e->cfg.user ? e->cfg.user : "user");
	char *owner = strchr(user, ':') ? strdup(user) : text_printf("%s:", user);
	char *script = owner ? templates_steps_copy_script(inside, arg(step, 0), arg(step, 1),
		e->cfg.workdir ? e->cfg.workdir : "/home/user", owner,
		nargs(step) > 3 ? arg(step, 3) : "") : NULL;
	free(owner);
	if (!script) {
		finish(e, "out of memory");
		return;
	}
	e->cfg.has_files = true;
	run(e, "root", script, shown);
	free(script);
}

static void step_workdir(struct exec *e, const char *path)
{
	const char *from = e->cfg.workdir ? e->cfg.workdir : "/home/user";
	char *abs = path[0] == '/' ? strdup(path) : text_printf("%s/%s", from, path);
	char *q = abs ? templates_steps_quote(abs) : NULL;
	char *cmd = q ? text_printf("mkdir -p %s", q) : NULL;
	free(q);
	if (!cmd) {
		free(abs);
		finish(e, "out of memory");
		return;
	}
	free(e->pending_workdir);
	e->pending_workdir = abs;
	e->workdir_step = true;
	e->cfg.has_files = true;
	char *saved = e->cfg.workdir;
	e->cfg.workdir = NULL; /* mkdir from home: the new directory may not exist yet */
	run(e, "root", cmd, cmd);
	e->cfg.workdir = saved;
	free(cmd);
}

static void step(struct exec *e)
{
	const cJSON *s = cJSON_GetArrayItem(e->steps, e->i);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "type"));
	snprintf(e->step_name, sizeof e->step_name, "%d", e->i + 1);
	e->workdir_step = false;
	char args[600] = "";
	for (int k = 0; k < nargs(s) && strlen(args) < 500; k++)
		snprintf(args + strlen(args), sizeof args - strlen(args), " %.400s", arg(s, k));
	build_log(e->b, "info", e->step_name, "[builder %d/%d] %s%s", e->i + 1, e->n, type, args);
	if (strcmp(type, "RUN") == 0) {
		e->cfg.has_files = true;
		const char *user = nargs(s) > 1 && arg(s, 1)[0] ? arg(s, 1) : (e->cfg.user ? e->cfg.user : "user");
		run(e, user, arg(s, 0), arg(s, 0));
	} else if (strcmp(type, "COPY") == 0) {
		step_copy(e, s);
	} else if (strcmp(type, "WORKDIR") == 0) {
		step_workdir(e, arg(s, 0));
	} else if (strcmp(type, "ENV") == 0) {
		for (int k = 0; k + 1 < nargs(s); k += 2) {
			cJSON_DeleteItemFromObjectCaseSensitive(e->cfg.envs, arg(s, k));
			cJSON_AddStringToObject(e->cfg.envs, arg(s, k), arg(s, k + 1));
		}
		e->i++;
		schedule(e);
	} else { /* USER */
		struct sandbox_user u;
		if (strlen(arg(s, 0)) >= 64 || runtime_user_resolve(e->sb, arg(s, 0), &u) != 0) {
			char reason[200];
			snprintf(reason, sizeof reason, "failed to set user '%.64s': invalid username: '%.64s'",
				arg(s, 0), arg(s, 0));
			finish(e, reason);
			return;
		}
		free(e->cfg.user);
		e->cfg.user = strdup(arg(s, 0));
		e->i++;
		schedule(e);
	}
}

static void on_tick(evutil_socket_t fd, short what, void *ctx)
{
	(void)fd;
	(void)what;
	struct exec *e = ctx;
	if (e->i < 0) { /* a command failed: its reason is in pending_workdir */
		char *reason = e->pending_workdir;
		e->pending_workdir = NULL;
		finish(e, reason ? reason : "out of memory");
		free(reason);
		return;
	}
	if (e->i < e->n) {
		step(e);
		return;
	}
	finish(e, NULL);
}

static bool is_e2b_base_image(const char *ref)
{
	static const char *const names[] = {"e2bdev/base", "e2bdev/base:latest",
		"docker.io/e2bdev/base", "docker.io/e2bdev/base:latest"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(ref, names[i]) == 0)
			return true;
	return false;
}

/* The parent's configuration, or a reason the build fails at "base". */
static const char *resolve_base(struct exec *e, const cJSON *req, char *why, size_t len)
{
	const char *image = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "fromImage"));
	const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "fromTemplate"));
	if (!from && image && !is_e2b_base_image(image)) {
		snprintf(why, len, "fromImage '%.200s': images from registries are not supported by this "
			"backend yet; build on fromBaseImage() or fromTemplate(...)", image);
		return why;
	}
	if (!from)
		from = "base";
	struct template *parent = templates_find(e->env->catalog, from);
	const char *colon = strchr(from, ':');
	struct template_build *pb = parent ? templates_ready_build(parent, colon ? colon + 1 : NULL) : NULL;
	if (parent && !pb) {
		snprintf(why, len, "template '%.200s' has no ready build", from);
		return why;
	}
	if (pb) {
		if (pb->config.has_files) {
			snprintf(why, len, "template '%.200s' has files of its own: building on it needs the "
				"layer store, which this backend does not have yet", from);
			return why;
		}
		build_config_clear(&e->cfg);
		if (build_config_copy(&e->cfg, &pb->config) != 0)
			return "out of memory";
		free(e->cfg.start_cmd);
		free(e->cfg.ready_cmd);
		e->cfg.start_cmd = e->cfg.ready_cmd = NULL;
		return NULL;
	}
	struct runtime_error rerr;
	if (runtime_check_create(from, SANDBOX_DEFAULT_CPU_COUNT, SANDBOX_DEFAULT_MEMORY_MB,
		    SANDBOX_DEFAULT_DISK_SIZE_MB, &rerr) != 0 && rerr.status == 404) {
		snprintf(why, len, "%s", rerr.message);
		return why;
	}
	e->cfg.base = strdup(from);
	return e->cfg.base ? NULL : "out of memory";
}

static int make_sandbox(struct exec *e, char *why, size_t len)
{
	struct sandbox_spec spec = {.template_id = e->cfg.base, .timeout_s = BUILD_SANDBOX_TIMEOUT_S,
		.internal = true, .allow_internet_access = -1, .cpu_count = e->b->cpu_count,
		.memory_mb = e->b->memory_mb, .disk_size_mb = e->b->disk_mb};
	struct runtime_error rerr;
	if (runtime_check_create(spec.template_id, spec.cpu_count, spec.memory_mb, spec.disk_size_mb,
		    &rerr) != 0 || !(e->sb = registry_create(e->env->reg, &spec, &rerr))) {
		snprintf(why, len, "cannot create the build sandbox: %s", rerr.message);
		return -1;
	}
	/* The same network rules as any sandbox: egress as --sandbox-network allows. */
	struct net_policy policy = {.allow_internet_access = -1};
	char nwhy[256];
	if (net_sandbox_attach(e->sb, &policy, nwhy, sizeof nwhy) != 0) {
		snprintf(why, len, "cannot create the build sandbox: %s", nwhy);
		return -1;
	}
	return 0;
}

int templates_exec_start(struct templates_env *env, struct template *tpl, struct template_build *b,
	const cJSON *request, char *why, size_t why_len)
{
	(void)tpl;
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(request, "steps");
	if (templates_steps_check(steps, why, why_len) != 0)
		return -1;
	static const char *const strings[] = {"fromImage", "fromTemplate", "startCmd", "readyCmd"};
	for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(request, strings[k]);
		if (v && !cJSON_IsNull(v) && !cJSON_IsString(v)) {
			snprintf(why, why_len, "field \"%s\" must be a string", strings[k]);
			return -1;
		}
	}
	struct exec *e = calloc(1, sizeof *e);
	if (!e || !(e->request = cJSON_Duplicate(request, true)) ||
	    !(e->cfg.envs = cJSON_CreateObject()) || !(e->cfg.user = strdup("user")) ||
	    !(e->tick = evtimer_new(env->base, on_tick, e))) {
		if (e) {
			cJSON_Delete(e->request);
			build_config_clear(&e->cfg);
			free(e);
		}
		snprintf(why, why_len, "out of memory");
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
	char reason[700];
	const char *bad = resolve_base(e, e->request, reason, sizeof reason);
	if (!bad && make_sandbox(e, reason, sizeof reason) != 0)
		bad = reason;
	if (bad) {
		finish(e, bad);
		return 0;
	}
	const char *start = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e->request, "startCmd"));
	const char *ready = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e->request, "readyCmd"));
	if ((start && start[0] && !(e->cfg.start_cmd = strdup(start))) ||
	    (ready && ready[0] && !(e->cfg.ready_cmd = strdup(ready)))) {
		finish(e, "out of memory");
		return 0;
	}
	build_log(b, "info", "base", "Base: template '%s'", e->cfg.base ? e->cfg.base : "base");
	schedule(e);
	return 0;
}

void templates_exec_cancel(struct templates_env *env, struct template_build *b)
{
	for (struct exec *e = env->running; e; e = e->next) {
		if (e->b == b) {
			finish(e, "the build was cancelled");
			return;
		}
	}
}

void templates_exec_sandbox_removing(void *ctx, struct sandbox *sb)
{
	struct templates_env *env = ctx;
	for (struct exec *e = env->running; e; e = e->next) {
		if (e->sb == sb) {
			e->sb = NULL; /* being removed already */
			if (e->proc)
				process_run_detach(e->proc);
			e->proc = NULL;
			/* Not from inside the registry's removal: the tick reports it. */
			free(e->pending_workdir);
			e->pending_workdir = strdup("the build sandbox was removed");
			e->i = -1 - (e->i < 0 ? 0 : e->i);
			schedule(e);
			return;
		}
	}
}

void templates_exec_shutdown(struct templates_env *env)
{
	while (env->running)
		finish(env->running, "the backend stopped");
}
