/* files_io.h — files.read and files.write: file content over envd's /files
 * (docs/e2b-protocol-notes.md, "Files"). Named by the method table; calls
 * files.c, files_chmod.c (a write's mode and owner), envd.c and the codecs. */
#ifndef E2BW_FILES_IO_H
#define E2BW_FILES_IO_H

#include "calls.h"
#include "core_state.h"

void e2bw_files_read(e2bw_core *core, e2bw_call *call);
void e2bw_files_write(e2bw_core *core, e2bw_call *call);

#endif
