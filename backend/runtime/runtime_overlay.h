/* A sandbox's root filesystem: an overlay of a stack of read-only layers
 * (bottom first: the template's own rootfs, or the layers a caller gives in
 * struct sandbox_spec.layers) under the sandbox's writable layer. Each layer
 * is mounted idmapped for the sandbox's id range at <dir>/lower<i> (i = 0
 * the bottom), and the overlay takes them as
 * lowerdir=lower<n-1>:...:lower0, relative paths, so /proc/self/mountinfo
 * inside names no host path. Rootless there is no idmapping: a stack must
 * be one layer owned by the sandboxes' root already. Calls
 * runtime_userns.c, runtime_ids.c and lib/. */
#ifndef E2B_BACKEND_RUNTIME_OVERLAY_H
#define E2B_BACKEND_RUNTIME_OVERLAY_H

#include "runtime/runtime_state.h"

#include <stddef.h>
#include <sys/types.h>

struct err;
struct sandbox;

/* At most this many layers in a stack (overlay itself takes 500; the store's
 * users squash deeper stacks, docs/backend/state.md "State directory"). */
#define RUNTIME_MAX_LAYERS 128

/* <templates>/<template_id>/rootfs, or NULL for a name that is not one path
 * element of [A-Za-z0-9._-] (or out of memory). The caller frees it. */
char *runtime_template_rootfs(const char *template_id);
/* Mounts the sandbox's layers and its overlay (upper and work on its disk,
 * rt->disk, with full isolation) at <dir>/rootfs. -1 with err set (an HTTP
 * status: 400 too many layers, else 500); what was mounted is in rt for
 * runtime_overlay_unmount. */
int runtime_overlay_mount(struct sandbox *sb, struct sandbox_rt *rt, struct err *err);
/* Unmounts the overlay and its layers (in a cleaner). */
void runtime_overlay_unmount(const struct sandbox_rt *rt, const char *dir);

/* Where the sandbox's writable layer is, for sealing it into a layer
 * (store_layer_seal): the overlay's upper directory (a host path in the
 * backend's mount namespace, valid while the sandbox exists) and the ids
 * its files carry there: the sandbox's id X is id_base + X, X < id_count.
 * The caller freezes the sandbox (runtime_sandbox_freeze) while it reads
 * it. 0 ok, -1 with errno (EINVAL without isolation, ENAMETOOLONG). */
int runtime_sandbox_upper(const struct sandbox *sb, char *path, size_t path_len, uid_t *id_base,
	unsigned long *id_count);

#endif
