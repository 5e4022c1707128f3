/* Unpacking an image's layers while skopeo still downloads them. skopeo
 * copy into an OCI layout (containers/image 5.23, oci/layout PutBlob) writes
 * each blob to <layout>/oci-put-blob<random>, fsyncs and closes it, then
 * renames it to blobs/sha256/<digest>, or removes it when the download
 * failed or its digest does not match; it fetches several blobs at once.
 * For each such file, as it appears (inotify on the layout), a follower
 * process is forked that reads it as it grows and unpacks it
 * (images_unpack.h) into a directory of its own, which reports the diff
 * id. Nothing a follower made is trusted until skopeo has exited 0 (every
 * blob's digest verified), the file it read is the one skopeo renamed to
 * the layer's blob (the same inode: its bytes are the ones skopeo hashed;
 * only skopeo writes in the layout) and the diff id is the config's
 * (images_follow_take); anything else is left for the scratch directory's
 * removal, and that layer is unpacked from its blob afterwards, as without
 * followers. Blocking, in the pull's helper. Calls images_unpack, lib/. */
#ifndef E2B_BACKEND_IMAGES_FOLLOW_H
#define E2B_BACKEND_IMAGES_FOLLOW_H

#include "images/images_unpack.h"

#include <stdbool.h>
#include <stdint.h>

struct images_follow;

/* Watches layout (an existing, empty directory skopeo is about to fill);
 * the followers' trees go in <scratch>/follow-<pid>/root, and
 * max_tar_bytes bounds what they unpack together. NULL with errno. */
struct images_follow *images_follow_start(const char *layout, const char *scratch, uint64_t max_tar_bytes);
/* Readable when a blob may have appeared: then call images_follow_events. */
int images_follow_fd(const struct images_follow *f);
/* Forks a follower for each new blob file (a struct images_follow *). */
void images_follow_events(void *f);
/* skopeo has exited: waits for every follower (killing them first unless
 * skopeo succeeded) and keeps what each made. */
void images_follow_end(struct images_follow *f, bool skopeo_ok);
/* The directory (holding root/) that a follower unpacked into the layer
 * diff_id from the file skopeo then renamed to blob (blobs/sha256/<digest>:
 * the same inode), with its stats; the caller then owns the directory
 * (publishes it). NULL when no follower did. */
const char *images_follow_take(struct images_follow *f, const char *blob, const char *diff_id,
	struct images_unpack_stats *stats);
/* Forgets f (a follower still running is killed); the directories stay
 * for the scratch directory's removal. */
void images_follow_free(struct images_follow *f);

#endif
