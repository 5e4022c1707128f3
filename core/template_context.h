/* template_context.h — the files a template build copies from: the
 * `context` param of templates.build ([{path, content (base64), mode?}]),
 * checked and made canonical; which of its files and directories a COPY
 * source names (a path, a directory, or a pattern as Docker's COPY reads
 * one); their hash by the official SDK's rule, so that the backend's cache
 * agrees whichever client built a step; and the archive the SDK uploads.
 * Pure: no core. */
#ifndef E2BW_TEMPLATE_CONTEXT_H
#define E2BW_TEMPLATE_CONTEXT_H

#include <stddef.h>

#include "buf.h"
#include "cJSON.h"

/* A directory of the context has no entry of its own: these stand for it
 * in the hash, as a directory on ext4 stats (drwxr-xr-x, 4096 bytes). */
#define E2BW_CONTEXT_DIR_MODE 0755
#define E2BW_CONTEXT_DIR_SIZE 4096
#define E2BW_CONTEXT_FILE_MODE 0644

/* A context-relative path made canonical ("./a//b/" is "a/b", "." is ""),
 * appended to out. 0; -1 when it is absolute or leaves the context ("../x",
 * "a/../../x"); -2 when out of memory. */
int e2bw_context_path(e2bw_buf *out, const char *path);

/* Checks `context` (an array) and makes each path canonical in place. NULL,
 * or an invalid_params error naming the field ("context[3].path"); NULL
 * with *oom set when out of memory. */
cJSON *e2bw_context_check(cJSON *context, int *oom);

/* One file or directory a COPY source names. */
typedef struct e2bw_context_entry {
	char *path;        /* canonical; "" for the context itself */
	const cJSON *file; /* its context item; NULL for a directory */
} e2bw_context_entry;

/* What src names: the file, or the directory and everything under it, or
 * what a pattern (* ? [..], within one path segment) matches; in the SDK's
 * order (by path). *n is 0 when it names nothing. -1 when out of memory. */
int e2bw_context_select(const cJSON *context, const char *src, e2bw_context_entry **out, size_t *n);
void e2bw_context_entries_free(e2bw_context_entry *e, size_t n);

/* The SDK's calculateFilesHash: SHA-256 of "COPY <src> <dest>", then per
 * entry its path, st_mode and size in decimal, and a file's bytes; as 64
 * hex digits. 0, or -1 when out of memory. */
int e2bw_context_hash(const e2bw_context_entry *e, size_t n, const char *src, const char *dest, char hex[65]);

/* The entries as the SDK uploads them: a gzipped tar of context-relative
 * paths. 0; -1 when out of memory; -2 when a path does not fit the tar. */
int e2bw_context_targz(const e2bw_context_entry *e, size_t n, e2bw_buf *out);

#endif
