/* Capturing a sandbox's filesystem: it is frozen (when running) while its
 * writable layer is sealed into a new layer with canonical ids
 * (store_layer_seal, in a helper off the loop), then thawed. The time it
 * takes grows with what the sandbox wrote, never with its template. Also
 * the stack of layer ids a sandbox stands on (a template's own root
 * filesystem is the external layer "template-<name>"). Calls registry/,
 * runtime/, store/ and lib/. */
#ifndef E2B_BACKEND_SNAPSHOTS_CAPTURE_H
#define E2B_BACKEND_SNAPSHOTS_CAPTURE_H

#include <stddef.h>

struct registry;
struct sandbox;

/* ids: the sandbox's stack with the new layer on top (bottom first), valid
 * during the call; error NULL on success (ids NULL otherwise). */
typedef void (*snapshots_captured)(void *ctx, char *const *ids, size_t count, const char *error);

/* Starts capturing sb; origin names the new layer's purpose ("snapshot",
 * "fork"). 0: done will run from the loop; -1 with why (409 for a sandbox
 * that cannot be captured now, 500 otherwise) and done will not. */
int snapshots_capture(struct registry *reg, struct sandbox *sb, const char *origin,
	snapshots_captured done, void *ctx, int *status, char *why, size_t why_len);

/* The layer ids sb stands on, bottom first (*ids to free with
 * snapshots_capture_free_ids). 0, or -1 with errno. */
int snapshots_capture_stack(const struct sandbox *sb, char ***ids, size_t *count);
void snapshots_capture_free_ids(char **ids, size_t count);

#endif
