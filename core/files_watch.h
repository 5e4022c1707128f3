/* files_watch.h — files.watch / files.unwatch (ours): a directory followed
 * through envd's WatchDir stream by the stream engine. Calls files.c,
 * envd.c and stream_open.c. */
#ifndef E2BW_FILES_WATCH_H
#define E2BW_FILES_WATCH_H

#include "calls.h"
#include "core_state.h"

void e2bw_files_watch(e2bw_core *core, e2bw_call *call);
void e2bw_files_unwatch(e2bw_core *core, e2bw_call *call);

#endif
