/* files.h — files and ports over envd (reference §5, §6): the files.* and
 * ports.url handlers, and what they share: envd's /files requests, the
 * EntryInfo → Entry mapping and envd's filesystem errors → typed errors. */
#ifndef E2BW_FILES_H
#define E2BW_FILES_H

#include "cJSON.h"
#include "core_internal.h"

/* The most bytes one files.read answers with: base64 of this many bytes plus
 * the answer's JSON fits in one EPP message (E2BW_MAX_MESSAGE_BYTES). */
#define E2BW_FILES_MAX_READ (((E2BW_MAX_MESSAGE_BYTES - 4096u) / 4u) * 3u)
/* The account envd acts as when a call names none (as the E2B SDK). */
#define E2BW_FILES_DEFAULT_USER "user"

/* --- files_entry.c ------------------------------------------------------- */
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

/* --- stream_open.c (the stream engine) --------------------------------- */
typedef void (*e2bw_run_done_fn)(e2bw_core *core, e2bw_call *call, cJSON *result);
/* Runs a StartRequest for the call as `user` and hands the exec.run-shaped
 * result (exit_code, stdout, stderr as text) to done instead of answering;
 * failures fail the call. */
void e2bw_run_internal(e2bw_core *core, e2bw_call *call, cJSON *start_message, const char *user, double timeout_s,
                       e2bw_run_done_fn done);
/* Follows a WatchDir stream for files.watch (answered at envd's start event). */
void e2bw_watch_open(e2bw_core *core, e2bw_call *call, cJSON *watch_message, const char *user, const char *dir, double watch_number);
/* Ends a watch with files.watch_end (cancelled). 0 when there is no such watch. */
int e2bw_watch_close(e2bw_core *core, const char *sandbox_id, double watch_number);

/* --- files_watch_events.c (what the engine sends) ----------------------- */
cJSON *e2bw_watch_started(const char *sandbox_id, double watch_number, const char *dir);
cJSON *e2bw_watch_event_params(const char *request_id, const char *sandbox_id, double watch_number, const char *dir,
                               const cJSON *fs_event);
cJSON *e2bw_watch_end_params(const char *request_id, const char *sandbox_id, double watch_number, cJSON *failure);

/* --- multipart.c -------------------------------------------------------- */
/* Appends a multipart/form-data body with one `file` part named `filename`. */
int e2bw_multipart_file(e2bw_buf *out, const char *boundary, const char *filename, const uint8_t *data, size_t len);

/* --- files_url.c -------------------------------------------------------- */
/* envd's signature: "v1_" + base64 (no padding) of sha256 of
 * "<path>:<operation>:<user>:<token>[:<expiration>]" (expiration < 0: none). */
int e2bw_files_signature(e2bw_buf *out, const char *path, const char *operation, const char *user, const char *token,
                         long long expiration);
/* RFC 3339 UTC ("2026-01-02T03:04:05Z") of unix seconds. */
void e2bw_rfc3339(char out[32], long long unix_seconds);

/* Handlers (method table). */
void e2bw_files_read(e2bw_core *core, e2bw_call *call);
void e2bw_files_write(e2bw_core *core, e2bw_call *call);
void e2bw_files_list(e2bw_core *core, e2bw_call *call);
void e2bw_files_stat(e2bw_core *core, e2bw_call *call);
void e2bw_files_mkdir(e2bw_core *core, e2bw_call *call);
void e2bw_files_remove(e2bw_core *core, e2bw_call *call);
void e2bw_files_move(e2bw_core *core, e2bw_call *call);
void e2bw_files_search(e2bw_core *core, e2bw_call *call);
void e2bw_files_chmod(e2bw_core *core, e2bw_call *call);
void e2bw_files_watch(e2bw_core *core, e2bw_call *call);
void e2bw_files_unwatch(e2bw_core *core, e2bw_call *call);
void e2bw_files_url(e2bw_core *core, e2bw_call *call);
void e2bw_ports_url(e2bw_core *core, e2bw_call *call);

/* Shared by the handlers (files.c). */
const char *e2bw_files_param_str(const e2bw_call *call, const char *name);
const char *e2bw_files_user(const e2bw_call *call);
/* The JSON answer of a unary call, or NULL after failing the call with the
 * typed error for `path`. Finishes op. */
cJSON *e2bw_fs_answer(e2bw_core *core, e2bw_http_op *op, const char *path);
/* Stat `path` and answer the call with its Entry (after write, chmod). */
void e2bw_files_answer_stat(e2bw_core *core, e2bw_call *call, const char *path);
/* After a write (or for files.chmod): apply mode/owner/group when given,
 * then answer with the Stat Entry (files_chmod.c). */
void e2bw_files_chmod_then_stat(e2bw_core *core, e2bw_call *call);
/* Glob match of a name: * ? [abc] [a-z] [!x], backslash escapes. */
int e2bw_glob_match(const char *pattern, const char *name);

#endif
