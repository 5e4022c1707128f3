/* store/ — what the backend keeps in its state directory beyond one run's
 * sandboxes (docs/backend/state.md, "State directory").
 * Owns: the state directory's lock (store_lock.h), the records, one JSON
 * file per object (store_records.h), and the layers: read-only trees that
 * sandboxes start from, stacked (this header), sealed from a sandbox's
 * writable layer with canonical ids (store_shift.h) by forked helpers
 * (store_helper.h).
 * May call: lib/, cJSON, libevent and the kernel. It knows nothing of
 * sandboxes: whoever seals a sandbox's writable layer (templates/,
 * snapshots/) asks the runtime where it is and which ids it has
 * (runtime_sandbox_upper), freezes the sandbox around the seal
 * (runtime_sandbox_freeze), and hands the layers' root paths to the runtime
 * as a stack (struct sandbox_spec.layers).
 *
 * A layer is <state-dir>/layers/<id>/ = root/ (the tree, owned by the ids
 * it has inside a sandbox: root 0, user 1000) and layer.json (id, parent,
 * origin, size, created; external for an external one). It is made in
 * layers/.tmp-<random>/ and renamed into place as the last step, so a
 * layer either is complete or is not there; .tmp-* directories left by a
 * crash are removed at the next start. An external layer is a directory
 * outside the store (the base template's build/templates/base/rootfs):
 * its root is a symbolic link to that directory, so every layer's tree is
 * reached as <id>/root and nothing is copied; deleting it removes the link
 * and the record, never the directory.
 *
 * The backend is single-threaded: these are called from its loop; sealing
 * and deleting run in forked helpers and report through a callback. */
#ifndef E2B_BACKEND_STORE_LAYERS_H
#define E2B_BACKEND_STORE_LAYERS_H

#include "store/store_records.h"

#include <stdint.h>
#include <sys/types.h>

struct err;
struct event_base;

struct store_layer {
	char id[STORE_NAME_MAX + 1];
	char parent[STORE_NAME_MAX + 1]; /* the layer it was sealed on, "" none */
	char origin[64];                 /* how it was made: "sealed", "external", ... (the caller's word) */
	char *root;                      /* absolute: <state>/layers/<id>/root, what runtime stacks take */
	char *external;                  /* the directory an external layer stands for, else NULL */
	uint64_t size;                   /* bytes of its files and links (0 for an external one) */
	int64_t created_ms;
};

/* Makes <state_root>/layers, loads every layer.json in it (a directory
 * without a valid one is skipped with a line on stderr), and removes the
 * .tmp-* directories of an earlier run in a helper. 0 ok, -1 with a
 * message on stderr. */
int store_layers_init(struct event_base *base, const char *state_root);
/* Waits for every helper (their callbacks run), then forgets the layers. */
void store_layers_shutdown(void);

/* The layer with that id, or NULL. Valid until it is removed or the store
 * shut down. */
const struct store_layer *store_layer_find(const char *id);
size_t store_layers_count(void);
const struct store_layer *store_layers_at(size_t i);

/* Records dir (absolute or relative; resolved) as the layer id without
 * copying it. Again with the same directory: 0, nothing changes. 0 ok, -1
 * with errno (EINVAL bad id, ENOTDIR, EEXIST for an id taken otherwise). */
int store_layer_add_external(const char *id, const char *dir, const char *origin);

/* Called on the loop when a seal or a removal has finished: layer is the new
 * layer (sealed) or NULL (removed, or failed); err NULL on success. */
typedef void (*store_layer_done)(void *ctx, const struct store_layer *layer, const struct err *err);

struct store_seal_spec {
	const char *upper;      /* the directory to seal (runtime_sandbox_upper) */
	uid_t id_base;          /* host id of the sandbox's id 0 (same for gids) */
	unsigned long id_count; /* how many ids the sandbox has */
	const char *id;         /* the new layer's id; NULL: 32 random hex digits */
	const char *parent;     /* recorded as the parent; NULL none */
	const char *origin;     /* recorded as origin; NULL: "sealed" */
};
/* Copies spec->upper into a new layer with canonical ids, in a helper; done
 * gets the layer. The caller keeps the sandbox frozen (or otherwise still)
 * until done has run. The new id is written to id_out (STORE_NAME_MAX + 1
 * bytes) when not NULL. 0 ok (done will be called), -1 with errno (EINVAL,
 * EEXIST for an id in use, or the fork's) and done will not be. */
int store_layer_seal(const struct store_seal_spec *spec, store_layer_done done, void *ctx, char *id_out);
/* Removes the layer: it is gone from lookups and from layers/ at once
 * (renamed to a .tmp-* directory), and deleted in a helper; done (may be
 * NULL) then runs. The caller must know that no sandbox is stacked on it:
 * a sandbox's mount of the layer shows the same files, which the deletion
 * removes. 0 ok, -1 with errno (ENOENT unknown). */
int store_layer_remove(const char *id, store_layer_done done, void *ctx);

/* Layers made by another job (an image's layers, images/): a scratch
 * directory layers/.tmp-<random> (made 0700; the next start removes one a
 * crash left), where the job builds <dir>/root and anything else it needs.
 * NULL with errno. The caller frees the path. */
char *store_scratch_new(void);
/* Removes a scratch directory in a helper, and frees path. */
int store_scratch_remove(char *path);
/* layers/<id>, where a layer of that id is or would be (malloc'd), or NULL
 * for a bad id. */
char *store_layer_path(const char *id);
/* Blocking, for a helper: makes dir (holding root/, on the store's file
 * system) the layer id: syncs it, writes layer.json and renames it into
 * place. A layer of that id made meanwhile by another job is the same tree:
 * dir is removed and 0 returned. 0 ok, -1 with err. */
int store_layer_publish(const char *dir, const char *id, const char *parent, const char *origin,
	uint64_t size, struct err *err);
/* On the loop: the layer id, read from layers/<id> when a helper has
 * published it since (store_layer_publish), or NULL when there is none. */
const struct store_layer *store_layer_adopt(const char *id);

#endif
