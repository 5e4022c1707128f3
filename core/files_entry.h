/* files_entry.h — envd's filesystem answers in EPP terms: EntryInfo → Entry,
 * and envd's filesystem failures → the error table's file kinds. Calls
 * errors.c and http_ops.c (an op's buffered body). */
#ifndef E2BW_FILES_ENTRY_H
#define E2BW_FILES_ENTRY_H

#include "cJSON.h"
#include "http_ops.h"

/* An EPP Entry from envd's EntryInfo; NULL when it lacks a name or path. */
cJSON *e2bw_entry_from_envd(const cJSON *info);
/* The typed error for a failed envd filesystem call or /files request (its
 * body buffered in op): a missing path is not_found with sdk_code E2001;
 * is-a-directory, not-a-directory, permission denied, no space, exists are
 * each their own kind. `path` goes to data.path. */
cJSON *e2bw_files_error(const e2bw_http_op *op, const char *sandbox_id, const char *path);
/* The same classification for an error message alone (a chmod's stderr);
 * fallback when nothing matches. */
cJSON *e2bw_files_error_text(const char *message, const char *path, int fallback_kind);

#endif
