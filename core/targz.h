/* targz.h — the upload format of a template's COPY files, as the official
 * SDK makes it (node-tar, gzip): a ustar archive wrapped in gzip. The gzip
 * is stored, not compressed (deflate's uncompressed blocks): any gunzip
 * reads it, and deflate's compressor would cost core.wasm more than the
 * upload saves on a loopback or data-centre link. Pure: no core. */
#ifndef E2BW_TARGZ_H
#define E2BW_TARGZ_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* 1 when path fits a ustar header (100 bytes, or a prefix of up to 155
 * before a '/' and a name of up to 100 after it). */
int e2bw_tar_fits(const char *path);
/* Appends one entry: a directory (data NULL) or a file of len bytes, mode
 * the permission bits, owner root, time 0. 0; -1 when out of memory; -2
 * when the path does not fit (e2bw_tar_fits). */
int e2bw_tar_add(e2bw_buf *tar, const char *path, unsigned mode, const uint8_t *data, size_t len, int is_dir);
/* Appends the end of the archive (two zero blocks). 0, or -1. */
int e2bw_tar_end(e2bw_buf *tar);
/* data as a gzip member of stored deflate blocks. 0, or -1 when out of
 * memory. */
int e2bw_gzip_stored(e2bw_buf *out, const uint8_t *data, size_t len);

#endif
