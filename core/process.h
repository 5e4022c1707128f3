/* process.h — the handlers of exec.run, exec.start, process.* and pty.*
 * over envd's process.Process service. The method table (methods.c) names
 * them; they call the stream engine (stream.h), envd.c, params.c and the
 * codecs below, never the table. */
#ifndef E2BW_PROCESS_H
#define E2BW_PROCESS_H

#include "calls.h"
#include "core_state.h"

void e2bw_exec_run(e2bw_core *core, e2bw_call *call);
void e2bw_exec_start(e2bw_core *core, e2bw_call *call);
void e2bw_process_list(e2bw_core *core, e2bw_call *call);
void e2bw_process_kill(e2bw_core *core, e2bw_call *call);
void e2bw_process_signal(e2bw_core *core, e2bw_call *call);
void e2bw_process_stdin(e2bw_core *core, e2bw_call *call);
void e2bw_process_attach(e2bw_core *core, e2bw_call *call);
void e2bw_pty_open(e2bw_core *core, e2bw_call *call);
void e2bw_pty_input(e2bw_core *core, e2bw_call *call);
void e2bw_pty_resize(e2bw_core *core, e2bw_call *call);
void e2bw_pty_close(e2bw_core *core, e2bw_call *call);

#endif
