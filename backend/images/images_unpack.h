/* Applying one image layer (a tar, plain, gzip or zstd) to an empty
 * directory as an overlay layer: files keep their owners as the tar says
 * (the ids they have inside a sandbox: canonical, as every layer of the
 * store), ids past 65535 become 65534; a ".wh.NAME" entry becomes a
 * whiteout (a character device 0:0 named NAME) and ".wh..wh..opq" makes its
 * directory opaque (trusted.overlay.opaque "y"). Device nodes are left out
 * (a sandbox has its own /dev), and so are xattrs other than user.* and
 * security.capability. Nothing is written outside the directory: names are
 * read from it (a leading "/" or "./" dropped, as Docker does); "..", paths
 * and hard links through a symbolic link the tar made, and hard links to
 * what is not one of its files, are refused.
 * The uncompressed stream's sha256 is the layer's diff id: reported, and
 * checked when the caller knows it. Blocking: for a forked helper. Calls
 * libarchive and OpenSSL. */
#ifndef E2B_BACKEND_IMAGES_UNPACK_H
#define E2B_BACKEND_IMAGES_UNPACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct err;

struct images_unpack_stats {
	uint64_t tar_bytes;  /* the uncompressed stream */
	uint64_t file_bytes; /* regular files' and links' sizes */
	unsigned entries, whiteouts, opaque, dropped;
	char diff_id[72]; /* "sha256:" and the uncompressed stream's digest, once read to its end */
};

/* A layer's bytes as they come (plain, gzip or zstd). */
struct images_unpack_source {
	/* Points buf at the next bytes (the reader's own buffer) and returns
	 * how many: 0 at the end, -1 with errno. May block until there are. */
	ssize_t (*read)(void *ctx, const void **buf);
	void *ctx;
	/* NULL, or a counter in shared memory that every unpack of one image
	 * adds its uncompressed bytes to: max_tar_bytes then bounds them all,
	 * when several run at once. */
	uint64_t *shared_total;
};

/* Unpacks the blob file into root (an existing empty directory). Fails past
 * max_tar_bytes of uncompressed stream, with the limit named. 0 ok, -1 with
 * err (root may be half-filled: the caller removes it). */
int images_unpack_layer(const char *blob, const char *root, const char *diff_id, uint64_t max_tar_bytes,
	struct images_unpack_stats *stats, struct err *err);
/* The same from a source; diff_id NULL: not checked (stats->diff_id says
 * what it is). */
int images_unpack_stream(const struct images_unpack_source *src, const char *root, const char *diff_id,
	uint64_t max_tar_bytes, struct images_unpack_stats *stats, struct err *err);

#endif
