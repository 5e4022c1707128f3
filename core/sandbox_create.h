/* sandbox_create.h — sandbox.create, mapped onto the E2B control plane
 * (docs/e2b-protocol-notes.md, "Control plane"): the record it answers with
 * is read back from the new sandbox's detail, and a create whose answer was
 * lost is looked up by its own key, so a retry never leaks a sandbox. Named
 * by the method table (methods.c); calls sandbox.c, e2b_api.c, envd.c,
 * calls.c and the codecs. */
#ifndef E2BW_SANDBOX_CREATE_H
#define E2BW_SANDBOX_CREATE_H

#include "calls.h"
#include "core_state.h"

void e2bw_sandbox_create(e2bw_core *core, e2bw_call *call);

#endif
