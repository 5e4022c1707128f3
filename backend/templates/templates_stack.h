/* A template's files: an ordered stack of layers in the store (store/),
 * bottom first, the bottom one standing for a built-in template's rootfs
 * (build/templates/<name>/rootfs, imported as an external layer without a
 * copy). Each build step that changes files adds one layer, whose id is the
 * step's cache key. Layers a template made are collected once nothing
 * refers to them: the references are the builds of the catalog (ready or
 * running) and the sandboxes of the registry, counted afresh each time
 * (never stored). Build sandboxes are made here, on a stack. Calls the
 * catalog, registry/, runtime/ (a built-in template's rootfs, a sandbox's
 * writable layer), net/ (a build sandbox's network), store/ and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_STACK_H
#define E2B_BACKEND_TEMPLATES_STACK_H

#include "store/store_layers.h"

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct err;
struct event_base;
struct registry;
struct sandbox;
struct template_config;
struct template_build;
struct templates;

/* A build's stack holds at most this many layers: deeper, it is squashed
 * (templates_squash.h; why this number: docs/templates.md, "Depth"). */
#define TEMPLATES_STACK_MAX 32
#define TEMPLATES_KEY_LEN 64
/* The origins (layer.json) of the layers templates make: only those are
 * collected here. */
#define TEMPLATES_ORIGIN_STEP "template-step"
#define TEMPLATES_ORIGIN_BASE "template-base"
/* A built-in template imported by snapshots/ itself as "template-<name>",
 * as state directories of earlier versions hold it: still stood on by their
 * snapshots and forks, collected with the others once nothing is. */
#define TEMPLATES_ORIGIN_LEGACY_BASE "template"
#define TEMPLATES_ORIGIN_IMAGE "template-image"   /* a registry image's layer (images/) */
#define TEMPLATES_ORIGIN_SQUASH "template-squash" /* layers merged into one (templates_squash.h) */

/* Collection runs on the loop, soon after templates_stack_collect_soon. */
int templates_stack_init(struct event_base *base, struct templates *catalog, struct registry *reg);
void templates_stack_shutdown(void);
void templates_stack_collect_soon(void);
/* Another keeper of layers (snapshots/, wired by main.c): at each
 * collection fn names every layer it stands on by calling keep(set, id),
 * and those are never removed. At most a few keepers. */
typedef void (*templates_layer_keeper)(void *ctx, void (*keep)(void *set, const char *id), void *set);
void templates_stack_add_keeper(templates_layer_keeper fn, void *ctx);

/* The layer standing for the built-in template name (imported on first
 * use; its id carries the recipe's hash, so a rebuilt rootfs is another
 * layer and no cache entry of the old one matches): the one layer builds
 * and snapshots of its sandboxes stand on. 0, or -1 with err. */
int templates_stack_builtin(const char *name, char id[STORE_NAME_MAX + 1], struct err *err);
/* Whether the build starts from a registry image (fromImage other than
 * E2B's base image, without fromTemplate): templates_image.h pulls it. */
bool templates_stack_wants_image(const struct cJSON *req);
/* The configuration and stack a build starts from (E2B's fromTemplate or
 * fromImage of TemplateBuildStartV2): a ready build of the catalog, or a
 * built-in template; e2bdev/base stands for the built-in base. cfg holds
 * the defaults (a parent build's configuration replaces it). 0, or -1 with
 * the reason the build fails at "base" in err. */
int templates_stack_parent(struct templates *catalog, const struct cJSON *req, struct template_config *cfg,
	struct err *err);
/* A step's cache key: sha256 (hex) of the stack below it, the step's
 * canonical JSON (type, args, filesHash) and the configuration it runs
 * with (user, working directory, environment). The stack counts as its top
 * layer's id (a step's key already covers what is under it), except when
 * the top is an image's layer over others: a diff id names one layer's
 * content, not the stack, so then as "chain:" and the sha256 of every id. */
void templates_stack_key(const struct cJSON *layers, const struct cJSON *step,
	const struct template_config *cfg, char key[TEMPLATES_KEY_LEN + 1]);
/* The root paths of the stack's layers for sandbox_spec.layers (a malloc'd
 * array of pointers into the store; free the array only), or NULL with err
 * when a layer is missing. */
const char **templates_stack_roots(const struct cJSON *layers, size_t *n, struct err *err);

/* A build sandbox on cfg's stack, with b's resources: hidden from the
 * sandbox lists, under the network rules of any sandbox. NULL with err. */
struct sandbox *templates_stack_sandbox(struct registry *reg, const struct template_config *cfg,
	const struct template_build *b, struct err *err);

/* Freezes the build sandbox sb and seals its writable layer into a layer on
 * parent, in a helper; done runs on the loop with the layer. Its id is key,
 * or a random one when key is taken (a forced step, or the same step being
 * sealed by another build). The caller keeps sb until done has run.
 * 0 ok, -1 with err (done will not run). */
int templates_stack_seal(struct sandbox *sb, const char *key, const char *parent, store_layer_done done,
	void *ctx, struct err *err);

#endif
