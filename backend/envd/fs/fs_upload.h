/* A POST /files body streamed to its files as it arrives (the connection
 * gate's STREAM verdict, http_gate.h): never held whole, gunzipped when
 * sent with Content-Encoding: gzip, split into parts when multipart
 * (fs_multipart.h), and written in slices on the event loop: each loop
 * turn inflates and writes at most FS_UPLOAD_SLICE_BYTES, then lets every
 * other client have its turn. Reading from the client stops while a slice
 * has not taken what came.
 *
 * What is written is capped twice: max_bytes in all (--max-upload-mb; a
 * gzip bomb ends at it with 413) and, per file, the free space of the
 * filesystem it is on when it is opened (507, as ENOSPC gives). Calls
 * fs_multipart.c, http/ (the gate) and zlib; the files themselves only
 * through the sink it is given (fs_files_post.c). */
#ifndef E2B_BACKEND_FS_UPLOAD_H
#define E2B_BACKEND_FS_UPLOAD_H

#include "envd/fs/fs_path.h"
#include "lib/err.h"

#include <stdbool.h>
#include <stdint.h>

struct event_base;
struct http_gate;

#define FS_UPLOAD_SLICE_BYTES (1024 * 1024) /* inflated and written per loop turn */
#define FS_UPLOAD_SKIP (-2)                 /* begin: drop this part's bytes */

/* 507 for ENOSPC/EDQUOT, else 500 "error <what> '<path>': <strerror>". */
int fs_upload_io_fail(struct err *e, int en, const char *what, const char *path);

struct fs_upload_sink {
	/* A file begins (the octet-stream body, or a part with its
	 * Content-Disposition): a descriptor to write it to (its sandbox path
	 * in path, FS_PATH_MAX bytes, for messages), FS_UPLOAD_SKIP, or -1
	 * with e set. */
	int (*begin)(void *arg, const char *disposition, char *path, struct err *e);
	/* Its bytes are written: finish and close fd. 0, or -1 with e set. */
	int (*end)(void *arg, int fd, struct err *e);
	/* The upload is over (e->status 0: all went well). The sink frees it
	 * with fs_upload_free, inside this call or later. */
	void (*done)(void *arg, const struct err *e);
	void *arg;
};

struct fs_upload;

/* boundary NULL: the body is one file (octet-stream). NULL when out of
 * memory or for a boundary multipart cannot use. */
struct fs_upload *fs_upload_start(struct event_base *base, struct http_gate *gate, bool gzip,
	const char *boundary, uint64_t max_bytes, const struct fs_upload_sink *sink);
/* Stops (if not done) and frees; a file being written is closed as it is. */
void fs_upload_free(struct fs_upload *u);

#endif
