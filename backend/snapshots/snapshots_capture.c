/* Capturing a sandbox (snapshots_capture.h). */
#define _GNU_SOURCE
#include "snapshots/snapshots_capture.h"

#include "lib/err.h"
#include "registry/registry.h"
#include "registry/registry_records.h"
#include "runtime/runtime.h"
#include "runtime/runtime_overlay.h"
#include "store/store_layers.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct capture {
	struct capture *next; /* in progress (g_captures) */
	struct registry *reg;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	char **ids; /* the stack, with room for the new layer */
	size_t count;
	snapshots_captured done;
	void *ctx;
};

/* Captures in progress: their stacks are in use. */
static struct capture *g_captures;

void snapshots_capture_free_ids(char **ids, size_t count)
{
	for (size_t i = 0; ids && i < count; i++)
		free(ids[i]);
	free(ids);
}

void snapshots_capture_keep_layers(void (*keep)(void *set, const char *id), void *set)
{
	for (const struct capture *c = g_captures; c; c = c->next)
		for (size_t i = 0; i < c->count; i++)
			keep(set, c->ids[i]);
}

/* The layer ids sb stands on, bottom first, with room for one more on top
 * (*ids to free with snapshots_capture_free_ids). 0, or -1 with errno. */
static int stack_of(const struct sandbox *sb, const char *template_layer, char ***ids, size_t *count)
{
	size_t n = sb->layer_count ? sb->layer_count : 1;
	char **out = calloc(n + 1, sizeof *out);
	if (!out)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *id = sb->layer_count ? registry_records_layer_id(sb->layers[i]) : template_layer;
		if (!id || !(out[i] = strdup(id))) {
			snapshots_capture_free_ids(out, i);
			errno = id ? ENOMEM : EINVAL; /* a layer the store does not know */
			return -1;
		}
	}
	*ids = out;
	*count = n;
	return 0;
}

static void unlink_capture(struct capture *c)
{
	struct capture **at = &g_captures;
	while (*at && *at != c)
		at = &(*at)->next;
	if (*at)
		*at = c->next;
}

static void on_sealed(void *arg, const struct store_layer *layer, const struct err *err)
{
	struct capture *c = arg;
	struct err failed;
	struct sandbox *sb = registry_find(c->reg, c->sandbox_id);
	if (sb && sb->state == SANDBOX_RUNNING) /* paused meanwhile: it stays frozen */
		runtime_sandbox_freeze(sb, false);
	if (!err && !layer) {
		err_set(&failed, 500, "no layer");
		err = &failed;
	} else if (!err && !(c->ids[c->count] = strdup(layer->id))) {
		err_set(&failed, 500, "out of memory");
		err = &failed;
	} else if (!err) {
		c->count++;
	}
	unlink_capture(c); /* done records what stands on them now */
	c->done(c->ctx, err ? NULL : c->ids, c->count, err);
	snapshots_capture_free_ids(c->ids, c->count);
	free(c);
}

int snapshots_capture(struct registry *reg, struct sandbox *sb, const char *template_layer,
	const char *origin, snapshots_captured done, void *ctx, struct err *err)
{
	if (!runtime_full()) {
		/* none: nothing to seal; rootless: no idmapped mounts, so no stacks. */
		err_set(err, 500, "snapshots and forks need full isolation (not %s)",
			runtime_isolation_name());
		return -1;
	}
	/* As E2B: both act on a running sandbox (the SDK's createSnapshot and
	 * fork), and its fork answers a paused one with this 409. A paused one
	 * kept from an earlier run has not even its disk mounted. */
	if (sb->state != SANDBOX_RUNNING) {
		err_set(err, 409, "Sandbox '%s' is paused and cannot be %s; resume it first", sb->id,
			strcmp(origin, "fork") == 0 ? "forked" : "snapshotted");
		return -1;
	}
	char upper[PATH_MAX];
	uid_t base;
	unsigned long id_count;
	struct capture *c = calloc(1, sizeof *c);
	if (!c || runtime_sandbox_upper(sb, upper, sizeof upper, &base, &id_count) != 0 ||
		stack_of(sb, template_layer, &c->ids, &c->count) != 0) {
		err_set(err, 500, "cannot capture the sandbox: %s", strerror(errno));
		free(c);
		return -1;
	}
	c->reg = reg;
	strcpy(c->sandbox_id, sb->id);
	c->done = done;
	c->ctx = ctx;
	/* Still while it is copied: a consistent filesystem. */
	if (runtime_sandbox_freeze(sb, true) != 0) {
		runtime_sandbox_freeze(sb, false);
		err_set(err, 500, "cannot freeze the sandbox");
		snapshots_capture_free_ids(c->ids, c->count);
		free(c);
		return -1;
	}
	struct store_seal_spec spec = {.upper = upper,
		.id_base = base,
		.id_count = id_count,
		.parent = c->ids[c->count - 1],
		.origin = origin};
	if (store_layer_seal(&spec, on_sealed, c, NULL) != 0) {
		err_set(err, 500, "cannot seal the sandbox's files: %s", strerror(errno));
		runtime_sandbox_freeze(sb, false);
		snapshots_capture_free_ids(c->ids, c->count);
		free(c);
		return -1;
	}
	c->next = g_captures;
	g_captures = c;
	return 0;
}
