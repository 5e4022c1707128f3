/* files_chmod.h — files.chmod, and the mode/owner/group of files.write: one
 * fixed program run as root through the stream engine (stream_open.c).
 * Calls files.c, files_entry.c, envd.c and the stream engine. */
#ifndef E2BW_FILES_CHMOD_H
#define E2BW_FILES_CHMOD_H

#include "calls.h"
#include "core_state.h"

void e2bw_files_chmod(e2bw_core *core, e2bw_call *call);
/* After a write (or for files.chmod): apply mode/owner/group when given,
 * then answer with the Stat Entry. */
void e2bw_files_chmod_then_stat(e2bw_core *core, e2bw_call *call);

#endif
