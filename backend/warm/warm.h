/* warm/ — sandboxes started before anyone asks: a few of the default shape
 * (the template "base", the default resources, no volumes, open network),
 * and a few of each built template recently created from (its stack of
 * layers, the default resources), kept running but nobody's, so a create
 * of such a shape only claims one (registry_claim) and the next is started
 * behind it, off the request's path: its long steps (cgroups, overlay, the
 * init's clone, its veth and relay sockets) on a worker thread
 * (lib/worker.h), the rest in short steps at the loop's lowest priority,
 * and the init's own mounts in its process at nice 19; so requests in
 * flight go first. A refill starts 30 ms after the take while its pool
 * still holds a sandbox (at once when it is empty), so the claimed
 * sandbox's first command does not run beside it. Two are made at once:
 * the worker builds the next while the last one's init mounts its root.
 * Owns: the pools (warm_pool.h), their refill and its worker.
 * May call: registry/ (launch, claim, discard), net/ (attach), runtime/
 * (the build and the init's report pipe), store/ (the ids of the layers
 * pooled sandboxes stand on) and lib/. Called by main.c and api/ (create,
 * template deletion). */
#ifndef E2B_BACKEND_WARM_H
#define E2B_BACKEND_WARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct event_base;
struct registry;
struct sandbox;
struct sandbox_spec;

#define WARM_DEFAULT_SIZE 3
#define WARM_MAX_SIZE 64
/* How many built templates get a pool of their own (--warm-templates). */
#define WARM_DEFAULT_TEMPLATES 4
#define WARM_MAX_TEMPLATES 16
/* A template's pool that no create took from for this long is dropped
 * (--warm-template-idle). */
#define WARM_DEFAULT_TEMPLATE_IDLE_S 300
#define WARM_MAX_TEMPLATE_IDLE_S 86400
/* Its steps run at this libevent priority, the lowest: main.c gives the
 * base WARM_PRIORITY + 1 levels (everything else runs at 1, the default). */
#define WARM_PRIORITY 2

struct warm;

/* Pools of size sandboxes each: one shaped like shape (its template_id and
 * resources; copied), standing, and up to templates more, one per built
 * template's stack as creates ask for them (warm_take). NULL when size is
 * 0, without isolation (a create costs nothing to warm there), with fewer
 * than 64 id ranges (--id-range: the pools would hold those the creates
 * need), or out of memory. Starts filling with the loop's first pass. */
struct warm *warm_new(struct event_base *base, struct registry *reg, const struct sandbox_spec *shape,
	size_t size, size_t templates, long template_idle_s);
/* A template with a start command (a built-in one: templates_builtin_cmds.h)
 * is pooled with it running: a pooled sandbox is ready once its ready
 * command succeeded, as on E2B, where the start command runs once at build
 * and every sandbox starts with it running (so it never sees a create's
 * envVars). begin starts `start` in sb and calls done(arg, err) later,
 * never from inside begin (err NULL: ready), returning a handle (NULL:
 * nothing started); abandon stops waiting (no done any more). main.c gives
 * templates_start.h's; without a starter such templates get no pool. */
struct warm_starter {
	void *ctx;
	void *(*begin)(void *ctx, struct sandbox *sb, const void *start,
		void (*done)(void *arg, const struct err *err), void *arg);
	void (*abandon)(void *handle);
};
void warm_set_starter(struct warm *w, const struct warm_starter *starter);
/* A started sandbox for spec, when a pool of spec's shape (and start, a
 * built-in template's start command, or NULL) has one ready: the caller
 * claims it (registry_claim) or gives it back with registry_discard. NULL
 * otherwise (create it the usual way). A spec with a stack of layers (a
 * built template's, whose sandboxes need nothing done at create: no start
 * command) or a start that no pool fits gets a pool for the next creates;
 * beyond templates of them, the one used longest ago goes. start must
 * outlive the warm set. */
struct sandbox *warm_take(struct warm *w, const struct sandbox_spec *spec, const void *start);
/* What GET /health says of the pools (all 0 without them). */
struct warm_counts {
	size_t ready, size;     /* the default shape's pool: ready, kept */
	size_t templates;       /* templates with a pool */
	size_t templates_ready; /* ready in those */
	uint64_t taken;         /* creates served by a pooled sandbox since the start */
};
void warm_counts(const struct warm *w, struct warm_counts *out);
/* Drops every template's pool (a template was deleted: the layers only
 * its pool still held may be collected). NULL is fine. */
void warm_forget_templates(struct warm *w);
/* The layers pooled sandboxes stand on, for the templates' collection
 * (a templates_layer_keeper: main.c adds it): keep(set, id) for each. */
void warm_keep_layers(void *ctx, void (*keep)(void *set, const char *id), void *set);
/* Removes every pooled sandbox (before the registry goes). NULL is fine. */
void warm_free(struct warm *w);

#endif
