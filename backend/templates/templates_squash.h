/* Squashing a build's stack (docs/templates.md, "Depth"). A stack holds at
 * most TEMPLATES_STACK_MAX layers: before a step that may change files at
 * that depth (any but ENV), and at the end of a build deeper than that (an
 * image's), the layers above the bottom one are merged into one layer
 * (store_squash.h, off the loop), and the stack becomes [bottom, merged].
 * The merged layer's id is derived from the ids it stands for, so a
 * rebuild of the same steps finds it in the store. The step layers it
 * replaced are collected once nothing else uses them; a rebuild then
 * misses the first of them, and walks the steps ahead with their cache
 * keys alone (the keys need no layer) to the merged layer
 * (templates_squash_ahead). Calls templates_stack.h, templates_steps.h, the
 * build's log (templates_build.h), store/ and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_SQUASH_H
#define E2B_BACKEND_TEMPLATES_SQUASH_H

#include "store/store_records.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct err;
struct event_base;
struct template_build;
struct template_config;

/* Whether the stack must be squashed now: before a step that may change
 * files (at_end false), or at the end of the build (at_end true). */
bool templates_squash_due(const struct cJSON *layers, bool at_end);
/* The merged layer's id for the stack layers: "squash-" and the sha256
 * (hex) of every id, bottom first. */
void templates_squash_id(const struct cJSON *layers, char id[STORE_NAME_MAX + 1]);

/* Runs on the loop: err NULL once the stack is [bottom, merged]; line
 * then says what was done, for the build's log. */
typedef void (*templates_squash_done)(void *ctx, const struct err *err, const char *line);
/* Squashes layers (the caller's array, rewritten when done succeeds; it
 * must stay until then). A merged layer in the store already is taken at
 * once: done runs before this returns. 0 ok, -1 with err (done will not
 * run). */
int templates_squash_start(struct event_base *base, struct cJSON *layers, templates_squash_done done,
	void *ctx, struct err *err);
/* Kills the squash started with ctx, if one runs (store_squash_cancel): its
 * done then runs with an error, once its helper is gone, and nothing half
 * made of it stays. */
void templates_squash_cancel(void *ctx);

/* After a cache miss of step i: whether the steps from i, walked as a fully
 * cached build takes them but with their cache keys alone (ENV and WORKDIR
 * applied; no USER, which needs a sandbox to look at its accounts; no
 * forced step), reach a squash whose merged layer is in the store. If so
 * they are logged to b as cached, cfg becomes what the build has after
 * them (its stack [bottom, merged]) and *next the step it goes on with;
 * else cfg is left as it was. */
bool templates_squash_ahead(const struct cJSON *steps, int i, bool force, struct template_config *cfg,
	struct template_build *b, int *next);

#endif
