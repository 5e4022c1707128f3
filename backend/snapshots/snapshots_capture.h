/* Capturing a running sandbox's filesystem: it is frozen while its
 * writable layer is sealed into a new layer with canonical ids
 * (store_layer_seal, in a helper off the loop), then thawed. The time it
 * takes grows with what the sandbox wrote, never with its template. Also
 * the stack of layer ids a sandbox stands on (a sandbox of a built-in
 * template stands on the layer templates/ imports that template's root
 * filesystem as, which the caller names), and the layers of captures in
 * progress, which no collector may take. Calls registry/, runtime/, store/
 * and lib/. */
#ifndef E2B_BACKEND_SNAPSHOTS_CAPTURE_H
#define E2B_BACKEND_SNAPSHOTS_CAPTURE_H

#include <stddef.h>

struct err;
struct registry;
struct sandbox;

/* ids: the sandbox's stack with the new layer on top (bottom first), valid
 * during the call; err NULL on success (ids NULL otherwise). */
typedef void (*snapshots_captured)(void *ctx, char *const *ids, size_t count, const struct err *err);

/* Starts capturing sb; template_layer is the layer id of its template's
 * root filesystem when sb stands on that alone (no layers of its own), else
 * NULL; origin names the new layer's purpose ("snapshot", "fork"). 0: done
 * will run from the loop; -1 with err (409 for a paused sandbox: resume it
 * first; 500 otherwise) and done will not. */
int snapshots_capture(struct registry *reg, struct sandbox *sb, const char *template_layer,
	const char *origin, snapshots_captured done, void *ctx, struct err *err);
void snapshots_capture_free_ids(char **ids, size_t count);
/* Names every layer a capture in progress stands on by calling keep(set,
 * id): its snapshot or forks are not recorded yet. */
void snapshots_capture_keep_layers(void (*keep)(void *set, const char *id), void *set);

#endif
