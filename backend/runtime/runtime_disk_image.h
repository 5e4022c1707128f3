/* One disk image of a sandbox: a sparse ext4 file, attached to a loop device
 * and mounted; and finding the loop devices and mounts that hold images
 * (for runtime_disk.c, and for runtime_leftovers.c after a dead backend).
 * Calls runtime_control.c (sleeping). */
#ifndef E2B_BACKEND_RUNTIME_DISK_IMAGE_H
#define E2B_BACKEND_RUNTIME_DISK_IMAGE_H

#include "runtime/runtime_state.h"

#include <stdbool.h>

struct err;

/* 0 when loop devices and mke2fs are there, else -1 with what is missing
 * (status an errno). */
int runtime_disk_image_check(struct err *err);
/* Makes img, an ext4 filesystem of size_mb (a copy of the size's master
 * image in masters_dir, made first if need be), attaches it to a free loop
 * device (autoclear, direct I/O) and mounts it at mnt. warm: its metadata is
 * read ahead, so the first writes do not wait for the disk. 0, or -1 with
 * errno and img removed; disk says what to release either way. */
int runtime_disk_image_prepare(const char *masters_dir, int size_mb, const char *img, const char *mnt,
	struct runtime_disk *disk, bool warm);
/* Attaches img, an image made earlier (a volume's, or the disk of a sandbox
 * an earlier backend left paused), and mounts it at mnt (made if missing).
 * 0, or -1 with errno; the image is kept either way. */
int runtime_disk_image_mount_existing(const char *img, const char *mnt, struct runtime_disk *disk);
/* Unmounts the image mounted at mnt, which is to be deleted: what was
 * written to it and not yet to the image is dropped (ext4's shutdown). */
void runtime_disk_image_unmount(const char *mnt);
/* Waits (bounded) until loop device n no longer holds a file whose path
 * starts with prefix. */
void runtime_disk_image_wait_detached(int n, const char *prefix);
/* How many loop devices hold a file under root; detach: asks the kernel to
 * detach each (at once when unused, else at its last close). */
int runtime_disk_image_loops_under(const char *root, bool detach);
/* Unmounts (detaching) whatever is mounted below dir. */
void runtime_disk_image_unmount_below(const char *dir);

#endif
