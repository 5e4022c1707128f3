/* Start and ready commands of a template's sandboxes (templates_start.h). */
#include "templates/templates_start.h"

#include "envd/process/process_run.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "registry/registry.h"
#include "templates/templates_build.h"
#include "templates/templates_exec.h"

#include <event2/event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct templates_start {
	struct templates_env *env;
	struct sandbox *sb;
	char sb_id[SANDBOX_ID_LEN + 1]; /* looked up again: the sandbox may go meanwhile */
	struct template_config cfg;
	templates_ready_cb cb;
	void *ctx;
	struct proc *start, *ready;
	struct event *timer;
	int64_t started_ms; /* the limit counts the ready command's own runs too */
	struct err error;   /* why it failed, when failed */
	bool failed;
	bool done;
	bool pooled; /* a warm pool's sandbox: in no list; the pool abandons it before removing it */
};

static void s_free(struct templates_start *s)
{
	if (s->start)
		process_run_detach(s->start);
	if (s->ready)
		process_run_detach(s->ready);
	if (s->timer)
		event_free(s->timer);
	build_config_clear(&s->cfg);
	free(s);
}

static void arm(struct templates_start *s, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
	evtimer_add(s->timer, &tv);
}

/* Reports from the loop (a timer), then frees: ready. */
static void conclude(struct templates_start *s)
{
	s->done = true;
	arm(s, 0);
}

/* The same, failed: why, formatted into s->error. */
__attribute__((format(printf, 2, 3))) static void conclude_failed(struct templates_start *s, const char *fmt,
	...)
{
	va_list ap;
	va_start(ap, fmt);
	err_setv(&s->error, 500, fmt, ap);
	va_end(ap);
	s->failed = true;
	conclude(s);
}

static void ignore_output(void *ctx, enum proc_output_kind kind, const uint8_t *data, size_t len)
{
	(void)ctx, (void)kind, (void)data, (void)len;
}

static void on_start_ended(void *ctx, int status)
{
	struct templates_start *s = ctx;
	s->start = NULL;
	if (s->done)
		return;
	conclude_failed(s,
		"the template's start command '%.500s' ended (%s %d) before the "
		"sandbox was ready",
		s->cfg.start_cmd, WIFEXITED(status) ? "exit status" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void on_ready_ended(void *ctx, int status)
{
	struct templates_start *s = ctx;
	s->ready = NULL;
	if (s->done)
		return;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		conclude(s);
		return;
	}
	arm(s, TEMPLATES_READY_INTERVAL_MS);
}

static const struct process_observer start_obs = {.output = ignore_output, .ended = on_start_ended};
static const struct process_observer ready_obs = {.output = ignore_output, .ended = on_ready_ended};

/* The start command's output goes to the sandbox's log, as on E2B; the
 * ready checks', every TEMPLATES_READY_INTERVAL_MS, does not. */
static struct proc *run(struct templates_start *s, const char *command, const struct process_observer *obs,
	struct err *err)
{
	struct process_run_spec spec = {.sb = s->sb,
		.user = s->cfg.user ? s->cfg.user : "user",
		.cwd = s->cfg.workdir,
		.command = command,
		.envs = s->cfg.envs,
		.log = obs == &start_obs};
	return process_run(s->env->pm, &spec, obs, s, err);
}

static void on_timer(evutil_socket_t fd, short what, void *ctx)
{
	(void)fd, (void)what;
	struct templates_start *s = ctx;
	if (s->done) {
		templates_ready_cb cb = s->cb;
		void *cb_ctx = s->ctx;
		bool failed = s->failed;
		struct err error = s->error;
		s_free(s);
		cb(cb_ctx, failed ? &error : NULL);
		return;
	}
	if (!s->pooled)
		s->sb = registry_find(s->env->reg, s->sb_id);
	if (!s->sb || s->sb->state != SANDBOX_RUNNING) {
		conclude_failed(s, "the sandbox was removed or paused before it was ready");
		return;
	}
	if (clock_now_ms() - s->started_ms > TEMPLATES_READY_TIMEOUT_MS) {
		conclude_failed(s, "the template's ready command '%.500s' did not succeed within %d s",
			s->cfg.ready_cmd, TEMPLATES_READY_TIMEOUT_MS / 1000);
		return;
	}
	struct err why;
	s->ready = run(s, s->cfg.ready_cmd, &ready_obs, &why);
	if (!s->ready)
		conclude_failed(s, "cannot run the template's ready command: %.599s", why.msg);
}

static struct templates_start *begin(struct templates_env *env, struct sandbox *sb,
	const struct template_config *cfg, templates_ready_cb cb, void *ctx, bool pooled)
{
	struct templates_start *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->pooled = pooled;
	s->started_ms = clock_now_ms();
	s->env = env;
	s->sb = sb;
	snprintf(s->sb_id, sizeof s->sb_id, "%s", sb->id);
	s->cb = cb;
	s->ctx = ctx;
	if (build_config_copy(&s->cfg, cfg) != 0 || !(s->timer = evtimer_new(env->base, on_timer, s))) {
		s_free(s);
		return NULL;
	}
	struct err why;
	s->start = run(s, cfg->start_cmd, &start_obs, &why);
	if (!s->start)
		conclude_failed(s, "cannot run the template's start command: %.599s", why.msg);
	else if (!cfg->ready_cmd)
		conclude(s);
	else
		arm(s, 0);
	return s;
}

struct templates_start *templates_start_begin(struct templates_env *env, struct sandbox *sb,
	const struct template_config *cfg, templates_ready_cb cb, void *ctx)
{
	return begin(env, sb, cfg, cb, ctx, false);
}

struct templates_start *templates_start_begin_pooled(struct templates_env *env, struct sandbox *sb,
	const struct template_config *cfg, templates_ready_cb cb, void *ctx)
{
	return begin(env, sb, cfg, cb, ctx, true);
}

void templates_start_abandon(struct templates_start *s)
{
	s_free(s);
}
