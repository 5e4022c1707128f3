/* code.h — the handlers of code.run and code.context.* (E2B's code
 * interpreter, docs/code-interpreter.md). The method table (methods.c) names
 * them; they call envd.c (the sandbox's token and domain, its URL),
 * calls.c, timers.c and the codecs below, never the table. */
#ifndef E2BW_CODE_H
#define E2BW_CODE_H

#include "calls.h"
#include "core_state.h"

void e2bw_code_run(e2bw_core *core, e2bw_call *call);
/* code.context.create, list, restart and remove, by the call's method. */
void e2bw_code_context(e2bw_core *core, e2bw_call *call);

#endif
