/* e2b_api.h — the E2B control plane (docs/e2b-protocol-notes.md, "Control
 * plane"): requests with the API key, response checking, HTTP errors → typed
 * EPP errors, and E2B sandbox objects → EPP SandboxRecords. */
#ifndef E2BW_E2B_API_H
#define E2BW_E2B_API_H

#include "cJSON.h"
#include "calls.h"
#include "core_state.h"
#include "http_ops.h"

/* The metadata key that tags each sandbox.create with its own request key,
 * so a create whose answer was lost can find its sandbox (sandbox.c); it is
 * left out of every record. */
#define E2BW_CREATE_KEY "e2bw_create_key"

/* Issues `method <api_url><path>` with X-API-Key (and a JSON body when
 * body != NULL). NULL after failing the call. */
e2bw_http_op *e2bw_api_request(e2bw_core *core, e2bw_call *call, const char *method, const char *path,
	const cJSON *body, e2bw_http_done_fn on_done);

/* The typed error for a non-2xx answer. sandbox_id (may be NULL) turns a
 * 404 into "sandbox not found" (-32002, E2009). */
cJSON *e2bw_api_error(const e2bw_http_op *op, const char *sandbox_id);

/* Parses a 2xx JSON body that must be an object (or array when want_array).
 * On garbage, fails the call with bad_response, finishes the op and returns
 * NULL. The caller owns the result. */
cJSON *e2bw_api_json(e2bw_core *core, e2bw_http_op *op, int want_array);

/* SandboxRecord from a create/connect answer (`Sandbox`) or from a
 * `SandboxDetail` / `ListedSandbox`. NULL when the object has no sandboxID. */
cJSON *e2bw_record_from_sandbox(const e2bw_config *cfg, const cJSON *sandbox);
cJSON *e2bw_record_from_detail(const e2bw_config *cfg, const cJSON *detail);

#endif
