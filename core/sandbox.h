/* sandbox.h — the sandbox.* handlers but sandbox.create (sandbox_create.h),
 * mapped onto the E2B control plane (docs/e2b-protocol-notes.md, "Control
 * plane"), and the requests and answers they share with it. The method
 * table (methods.c) names them; they call e2b_api.c, envd.c, calls.c and
 * the codecs below, never the table. */
#ifndef E2BW_SANDBOX_H
#define E2BW_SANDBOX_H

#include "buf.h"
#include "calls.h"
#include "cJSON.h"
#include "core_state.h"
#include "http_ops.h"

void e2bw_sandbox_get(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_list(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_kill(e2bw_core *core, e2bw_call *call);
/* sandbox.connect and sandbox.resume. */
void e2bw_sandbox_connect(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_set_timeout(e2bw_core *core, e2bw_call *call);
void e2bw_sandbox_pause(e2bw_core *core, e2bw_call *call);

/* prefix, the sandbox id percent-encoded, suffix ("/sandboxes/<id>/pause").
 * Non-zero when out of memory. */
int e2bw_sandbox_path(e2bw_buf *out, const char *prefix, const char *id, const char *suffix);
/* Ends op and its call: with the typed error of its non-2xx answer; with
 * result (taken; NULL: out of memory); with a bad_response for an answer
 * that is no sandbox record. */
void e2bw_sandbox_fail_status(e2bw_core *core, e2bw_http_op *op, const char *sandbox_id);
void e2bw_sandbox_succeed(e2bw_core *core, e2bw_http_op *op, cJSON *result);
void e2bw_sandbox_fail_bad_record(e2bw_core *core, e2bw_http_op *op);
/* Appends "&metadata=..." for a list filtered by metadata (an object of
 * strings), as E2B wants it. Non-zero when out of memory. */
int e2bw_sandbox_metadata_query(e2bw_buf *q, const cJSON *metadata);

#endif
