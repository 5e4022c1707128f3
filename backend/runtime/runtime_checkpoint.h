/* Checkpoint and restore of a whole sandbox with CRIU (Debian's criu): its
 * process tree, from the init down, dumped to <dir>/checkpoint and ended,
 * then brought back on its own disk with the same pids, memory, open files,
 * pipes, ptys and listening sockets. Only with full isolation and where
 * `criu check` passes (probed once, in the background, from
 * runtime_checkpoint_probe); elsewhere pauses freeze (the caller's choice,
 * runtime_checkpoint_available says why). Calls the runtime's state, cgroups,
 * spawn and lib/. On the event loop; a dump or a restore blocks it for
 * its length (about a second per few hundred MiB). */
#ifndef E2B_BACKEND_RUNTIME_CHECKPOINT_H
#define E2B_BACKEND_RUNTIME_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>

struct sandbox;
struct err;

#define RUNTIME_CHECKPOINT_DIR "checkpoint"     /* <sandbox dir>/checkpoint: a complete image */
#define RUNTIME_CHECKPOINT_TMP "checkpoint.tmp" /* a dump under way, removed unless it completes */

/* Starts `criu check` (after runtime_init); its answer is read when first
 * asked for. */
void runtime_checkpoint_probe(void);
/* Whether pauses can checkpoint here: 0 when they can, else -1 with why not
 * in err (status 0; a short sentence: the isolation, criu missing, or what
 * `criu check` said). err may be NULL. */
int runtime_checkpoint_available(struct err *err);
/* Whether this sandbox can be checkpointed now: 0, or -1 with why not in
 * err (status 0). */
int runtime_checkpoint_allowed(const struct sandbox *sb, struct err *err);
/* Dumps a running sandbox's tree into <dir>/checkpoint, complete on disk
 * (synced, then renamed into place) before its processes end; the sandbox
 * is then cold (runtime_sandbox_cold) with its disk kept. -1 with err
 * (status 0) when anything failed: then its processes run on, untouched,
 * and no image is left; -2 with err when the dump ended them but its image
 * could not be kept. The caller has parked the commands' descriptors in the init
 * (runtime_spawn_park) and taken its network link away. */
int runtime_checkpoint_dump(struct sandbox *sb, struct err *err);
/* A fork's image: sb's tree dumped into the new directory dir while its
 * processes go on, untouched (the same preparations as for a dump: the
 * commands' descriptors parked, the network link away). 0, or -1 with err
 * (status 0; dir not left). */
int runtime_checkpoint_copy(struct sandbox *sb, const char *dir, struct err *err);
/* Gives a cold sandbox the image another sandbox's runtime_checkpoint_copy
 * made in from (linked, with its user namespace's id maps moved to this
 * sandbox's range), for runtime_checkpoint_restore to bring up: the same
 * processes and memory in new namespaces (pid, user, mount, network, uts)
 * on this sandbox's disk. 0, or -1 with err (status 0). */
int runtime_checkpoint_take(struct sandbox *sb, const char *from, struct err *err);
/* Whether the (cold) sandbox has a complete image. */
bool runtime_checkpoint_present(const struct sandbox *sb);
/* Brings a cold sandbox with an image back: disk, mounts, cgroups, then its
 * tree, whose init takes new sockets to the backend. The image is removed
 * once the tree runs. -1 with err, status 500 but a reservation's own (the
 * sandbox stays cold, its image kept). */
int runtime_checkpoint_restore(struct sandbox *sb, struct err *err);
/* Removes the sandbox's image and any partial dump (its processes start
 * afresh next time). */
void runtime_checkpoint_discard(const struct sandbox *sb);

#endif
