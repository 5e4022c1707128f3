/* files.h — files over envd's filesystem.Filesystem service
 * (docs/e2b-protocol-notes.md, "Files"): the handlers of files.list, stat,
 * mkdir, remove, move and search, and what every files.* handler shares
 * (its user and parameters, a unary answer or its typed error, the Stat
 * answer). The other handlers are files_io.c, files_chmod.c, files_url.c and
 * files_watch.c. Named by the method table; calls files_entry.c, envd.c,
 * calls.c and the codecs. */
#ifndef E2BW_FILES_H
#define E2BW_FILES_H

#include "cJSON.h"
#include "calls.h"
#include "core_state.h"
#include "http_ops.h"

/* The most bytes one files.read answers with: base64 of this many bytes plus
 * the answer's JSON fits in one EPP message (E2BW_MAX_MESSAGE_BYTES). */
#define E2BW_FILES_MAX_READ (((E2BW_MAX_MESSAGE_BYTES - 4096u) / 4u) * 3u)

/* The handlers of files.list, stat, mkdir, remove, move and search. */
void e2bw_files_list(e2bw_core *core, e2bw_call *call);
void e2bw_files_stat(e2bw_core *core, e2bw_call *call);
void e2bw_files_mkdir(e2bw_core *core, e2bw_call *call);
void e2bw_files_remove(e2bw_core *core, e2bw_call *call);
void e2bw_files_move(e2bw_core *core, e2bw_call *call);
void e2bw_files_search(e2bw_core *core, e2bw_call *call);

/* Shared by the handlers (files.c). */
/* The call's `user`, or NULL: then no user is sent and envd acts as the
 * sandbox's default user (`user` in E2B's base template, a template's last
 * setUser otherwise), as the E2B SDK does. */
const char *e2bw_files_user(const e2bw_call *call);
/* The JSON answer of a unary call, or NULL after failing the call with the
 * typed error for `path`. Finishes op. */
cJSON *e2bw_fs_answer(e2bw_core *core, e2bw_http_op *op, const char *path);
/* Stat `path` and answer the call with its Entry (after write, chmod). */
void e2bw_files_answer_stat(e2bw_core *core, e2bw_call *call, const char *path);
/* Glob match of a name: * ? [abc] [a-z] [!x], backslash escapes. */
int e2bw_glob_match(const char *pattern, const char *name);

#endif
