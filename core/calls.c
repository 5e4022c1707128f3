/* calls.c — one EPP call's life below the handlers: answering it exactly
 * once, tearing down what ends with it (the hook a stream registers), and
 * the HTTP requests it owns (their failures fail it). Nothing here knows a
 * handler or a stream: the layers above call down into this file. */
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "alloc.h"
#include "calls.h"
#include "errors.h"
#include "http_ops.h"
#include "jsonrpc.h"
#include "redact.h"

static void call_unlink_free(e2bw_core *core, e2bw_call *call)
{
	for (e2bw_call **p = &core->calls; *p; p = &(*p)->next) {
		if (*p == call) {
			*p = call->next;
			break;
		}
	}
	if (call->teardown) { /* a stream cannot outlive the call it answers */
		void (*teardown)(e2bw_core *, void *) = call->teardown;
		void *arg = call->teardown_arg;
		call->teardown = NULL;
		call->teardown_arg = NULL;
		teardown(core, arg);
	}
	cJSON_Delete(call->id);
	cJSON_Delete(call->params);
	cJSON_Delete(call->scratch);
	free(call);
}

void e2bw_calls_free(e2bw_core *core)
{
	while (core->calls)
		call_unlink_free(core, core->calls);
}

void e2bw_redact(const e2bw_core *core, cJSON *item)
{
	for (cJSON *c = item ? item->child : NULL; c; c = c->next)
		e2bw_redact(core, c);
	if (cJSON_IsString(item) && item->valuestring) {
		char *clean = e2bw_redact_raw(&core->secrets, item->valuestring);
		free(item->valuestring); /* cJSON's allocator is the core's */
		item->valuestring = clean ? clean : NULL;
		if (!clean)
			item->type = cJSON_NULL; /* out of memory: nothing rather than the secret */
	}
}

void e2bw_reply_error(e2bw_core *core, const cJSON *id, cJSON *error)
{
	if (!error)
		error = e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory");
	e2bw_emit_answer(core, id, e2bw_rpc_error_text(id, error), 1);
}

void e2bw_notify(e2bw_core *core, const char *method, cJSON *params, int last)
{
	e2bw_emit_text(core, E2BW_MESSAGE_NOTIFICATION | (last ? E2BW_MESSAGE_LAST : 0),
		e2bw_rpc_notification_text(method, params));
}

static void succeed(e2bw_core *core, e2bw_call *call, cJSON *result, int last)
{
	e2bw_http_cancel_call(core, call);
	if (e2bw_alloc_failures() != core->alloc_mark) { /* maybe partial: never a success */
		cJSON_Delete(result);
		result = NULL;
	}
	e2bw_emit_answer(core, call->id, e2bw_rpc_result_text(call->id, result), last);
	call_unlink_free(core, call);
}

void e2bw_call_succeed(e2bw_core *core, e2bw_call *call, cJSON *result)
{
	succeed(core, call, result, 1);
}

void e2bw_call_succeed_streaming(e2bw_core *core, e2bw_call *call, cJSON *result)
{
	succeed(core, call, result, 0);
}

void e2bw_call_fail(e2bw_core *core, e2bw_call *call, cJSON *error)
{
	int (*vet)(e2bw_core *, e2bw_call *, cJSON *) = call->vet_failure;
	call->vet_failure = NULL; /* once: the answer it leads to is final */
	if (vet && vet(core, call, error))
		return;
	e2bw_http_cancel_call(core, call);
	e2bw_reply_error(core, call->id, error);
	call_unlink_free(core, call);
}

void e2bw_call_answered(e2bw_core *core, e2bw_call *call)
{
	e2bw_http_cancel_call(core, call);
	call_unlink_free(core, call);
}

/* The failure callback of every op a call owns. */
static void call_op_failed(e2bw_core *core, e2bw_http_op *op, cJSON *error)
{
	e2bw_call_fail(core, op->call, error);
}

void e2bw_call_own(e2bw_http_op *op, e2bw_call *call)
{
	op->call = call;
	op->on_fail = call_op_failed;
}

e2bw_http_op *e2bw_call_request(e2bw_core *core, e2bw_call *call, const char *method, const char *url,
	const char *what, const char *const *headers, const cJSON *json_body, e2bw_http_done_fn on_done)
{
	char *body = json_body ? cJSON_PrintUnformatted(json_body) : NULL;
	e2bw_http_spec spec = {method, url, what, headers, (const uint8_t *)body, body ? strlen(body) : 0,
		call->request_timeout_ms, NULL};
	e2bw_http_op *op = (json_body && !body) ? NULL : e2bw_http_start(core, &spec);
	free(body);
	if (!op) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory while building a request"));
		return NULL;
	}
	e2bw_call_own(op, call);
	op->on_done = on_done;
	return op;
}

const cJSON *e2bw_call_param(const e2bw_call *call, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(call->params, name);
}

const char *e2bw_call_param_str(const e2bw_call *call, const char *name)
{
	const cJSON *v = e2bw_call_param(call, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *e2bw_call_param_num(const e2bw_call *call, const char *name)
{
	const cJSON *v = e2bw_call_param(call, name);
	return cJSON_IsNumber(v) ? v : NULL;
}
