/* A sandbox's disk limit: its writable layer (the overlay's upper and work
 * directories) lives on an ext4 image of diskSizeMB, sparse, attached to a
 * loop device and mounted at <dir>/disk in the backend's private mount
 * namespace. Writing past the size fails with ENOSPC inside the sandbox, and
 * df there shows the image's size.
 *
 * Creation stays fast with a pool of images of the default size, formatted,
 * attached and mounted ahead of time by a helper process (forked once, off
 * the event loop) and moved into a sandbox's directory when it is created.
 * Other sizes are prepared during the create request. Loop devices are
 * attached with autoclear: the kernel detaches one as soon as its filesystem
 * is unmounted, which includes the end of a killed backend's mount namespace.
 *
 * One image: runtime_disk_image.h. Calls runtime_disk_image.c,
 * runtime_control.c (sleeping) and lib/. */
#ifndef E2B_BACKEND_RUNTIME_DISK_H
#define E2B_BACKEND_RUNTIME_DISK_H

#include "runtime/runtime_state.h"

struct err;

#define RUNTIME_DISK_MOUNT "disk" /* <sandbox dir>/disk: upper/ and work/ are in it */
#define RUNTIME_DISK_POOL 4       /* images of the default size kept ready */

/* Makes <state_root>/disks and starts the pool's helper. Call in the
 * backend's private mount namespace. 0, or -1 with err (status an errno). */
int runtime_disk_init(const char *state_root, struct err *err);
/* Blocking: stops the helper, unmounts the pool, deletes <state_root>/disks. */
void runtime_disk_shutdown(void);
/* -1 with err's status 507 when the host's free space (where the images
 * live) is below size_mb. */
int runtime_disk_check_space(int size_mb, struct err *err);
/* Gives the sandbox directory dir its disk: <dir>/disk.img mounted at
 * <dir>/disk. From the pool for the default size, else prepared here.
 * 0 ok, -1 with errno (disk says what to release). */
int runtime_disk_attach(const char *dir, int size_mb, struct runtime_disk *disk);
/* In the cleaner, after the overlay is unmounted: unmounts <dir>/disk and
 * waits (bounded) until the loop device has let the image go. */
void runtime_disk_release(const char *dir, const struct runtime_disk *disk);

#endif
