/* A template's start and ready commands in each sandbox of it: the start
 * command runs in the background (as the template's user, in its working
 * directory, with its environment); the ready command runs every
 * TEMPLATES_READY_INTERVAL_MS until it exits 0. The caller (the create
 * route) answers only then. The start command exiting before the sandbox is
 * ready, or no success within TEMPLATES_READY_TIMEOUT_MS, fails the create
 * with a message saying which. Calls envd/process/ (process_run.h). */
#ifndef E2B_BACKEND_TEMPLATES_START_H
#define E2B_BACKEND_TEMPLATES_START_H

#include <stddef.h>

struct err;
struct sandbox;
struct template_config;
struct templates_env;
struct templates_start;

#define TEMPLATES_READY_INTERVAL_MS 100
#define TEMPLATES_READY_TIMEOUT_MS (120 * 1000)

/* err NULL: ready; else err says why not (status 500). Called once, from
 * the loop, never from inside templates_start_begin. */
typedef void (*templates_ready_cb)(void *ctx, const struct err *err);

struct templates_start *templates_start_begin(struct templates_env *env, struct sandbox *sb,
	const struct template_config *cfg, templates_ready_cb cb, void *ctx);
/* The same in a sandbox of a warm pool (warm.h), which is in no list: the
 * pool keeps it until the callback, or abandons the start before it
 * removes the sandbox. */
struct templates_start *templates_start_begin_pooled(struct templates_env *env, struct sandbox *sb,
	const struct template_config *cfg, templates_ready_cb cb, void *ctx);
/* The caller gives up (its client went away): no callback any more. */
void templates_start_abandon(struct templates_start *s);

#endif
