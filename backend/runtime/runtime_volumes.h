/* Volumes inside a sandbox: each volume mounted at its path in the
 * sandbox's root, writable, idmapped for the sandbox's id range (a file that
 * is root's on the volume is the sandbox's root's, whichever range the
 * sandbox has; rootless: a plain bind, its range is the volume's). Mounted
 * after the overlay and before the init starts, so the init's recursive bind
 * of its root carries them; they go with the overlay's detach at removal.
 * Mount points missing in the sandbox are made beneath its root
 * (openat2 RESOLVE_IN_ROOT: a symbolic link the sandbox planted cannot lead
 * out of it). Calls runtime_ids.c and the kernel. */
#ifndef E2B_BACKEND_RUNTIME_VOLUMES_H
#define E2B_BACKEND_RUNTIME_VOLUMES_H

#include <stddef.h>

struct err;
struct sandbox;

/* <state root>/volumes/<id>/data: where a volume's files are (its own ext4
 * image mounted there with full isolation, a directory otherwise). The
 * caller frees it; NULL on a bad id or no memory. */
char *runtime_volumes_data_dir(const char *volume_id);
/* Mounts every volume of sb->volume_mounts into its root. 0, or -1 with
 * what failed in err (status 500, for the create's answer). */
int runtime_volumes_mount(struct sandbox *sb, struct err *err);

#endif
