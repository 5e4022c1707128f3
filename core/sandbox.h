/* sandbox.h — the sandbox.* handlers, mapped onto the E2B control plane
 * (docs/e2b-protocol-notes.md, "Control plane"). The method table
 * (methods.c) names them; they call e2b_api.c, envd.c, calls.c and the
 * codecs below, never the table. */
#ifndef E2BW_SANDBOX_H
#define E2BW_SANDBOX_H

#include "calls.h"
#include "core_state.h"

void e2bw_sandbox_create(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_get(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_list(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_kill(e2bw_core *core, e2bw_call *call);
/* sandbox.connect and sandbox.resume. */
void e2bw_sandbox_connect(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_set_timeout(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_pause(e2bw_core *core, e2bw_call *call);

#endif
