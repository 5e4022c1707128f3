/* core.c — the core object: takes EPP messages in, validates the envelope,
 * routes through the method table (methods.c) and answers every request
 * exactly once. The top of the core: nothing calls into it but the host
 * (through include/e2bw.h); the handshake's handlers are in handshake.c. */
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "alloc.h"
#include "calls.h"
#include "core_state.h"
#include "envd.h"
#include "errors.h"
#include "handshake.h"
#include "http_ops.h"
#include "json_text.h"
#include "jsonrpc.h"
#include "methods.h"
#include "param_spec.h"
#include "stream.h"
#include "timers.h"

const char *e2bw_version(void)
{
	return E2BW_VERSION;
}

void e2bw_free(void *p)
{
	free(p);
}

e2bw_core *e2bw_core_new(void)
{
	e2bw_alloc_hooks();
	e2bw_core *core = calloc(1, sizeof *core);
	if (!core)
		return NULL;
	if (e2bw_reserve_answer(core) != 0) {
		free(core);
		return NULL;
	}
	e2bw_ndjson_init(&core->ndjson, E2BW_MAX_MESSAGE_BYTES);
	return core;
}

void e2bw_core_free(e2bw_core *core)
{
	if (!core)
		return;
	e2bw_streams_free(core);
	e2bw_timers_free(core);
	e2bw_http_ops_free(core);
	e2bw_calls_free(core);
	e2bw_sandboxes_free(core);
	e2bw_actions_free(core);
	e2bw_secrets_free(&core->secrets);
	e2bw_ndjson_free(&core->ndjson);
	e2bw_config_free(&core->config);
	free(core->key_hint);
	cJSON_Delete(core->host_config);
	free(core);
}

int e2bw_core_is_shut_down(const e2bw_core *core)
{
	return core->shut_down;
}

static double earliest(double a, double b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

double e2bw_core_next_deadline(const e2bw_core *core)
{
	return earliest(earliest(e2bw_http_next_deadline(core), e2bw_streams_next_deadline(core)),
		e2bw_timers_next_deadline(core));
}

void e2bw_core_tick(e2bw_core *core, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_streams_tick(core);
	e2bw_http_tick(core);
	e2bw_timers_tick(core);
}

/* The call takes the request's params out of its tree (no copy: they may
 * hold many MiB of content). */
static void start_call(e2bw_core *core, const e2bw_method *m, e2bw_rpc_request *req)
{
	e2bw_call *call = calloc(1, sizeof *call);
	if (call) {
		call->id = cJSON_Duplicate(req->id, 1);
		call->params = req->params ? cJSON_DetachItemViaPointer(req->root, req->params)
					   : cJSON_CreateObject();
		req->params = NULL;
	}
	if (!call || !call->id || !call->params) {
		if (call) {
			cJSON_Delete(call->id);
			cJSON_Delete(call->params);
			free(call);
		}
		e2bw_reply_error(core, req->id, e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory"));
		return;
	}
	call->method = m;
	call->request_timeout_ms = core->config.request_timeout_ms;
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(call->params, "request_timeout");
	if (cJSON_IsNumber(rt) && rt->valuedouble > 0)
		call->request_timeout_ms = rt->valuedouble * 1000.0;
	call->next = core->calls;
	core->calls = call;
	m->start(core, call);
}

/* A detached value (e2bw.h), or none (member NULL). */
typedef struct detached_in {
	const char *member, *value;
	size_t member_len, value_len;
} detached_in;

static void process_message(e2bw_core *core, const char *text, size_t len, const detached_in *d)
{
	e2bw_rpc_request req;
	cJSON *error = NULL;
	e2bw_rpc_parse_result kind = e2bw_rpc_parse(text, len, &req, &error);
	const e2bw_method *m = NULL;
	if (d && kind == E2BW_RPC_REQUEST) { /* a notification is never acted on: its value is not needed */
		error = e2bw_rpc_attach(&req, d->member, d->member_len, d->value, d->value_len);
		if (error)
			kind = E2BW_RPC_INVALID;
	}

	if (kind == E2BW_RPC_INVALID) {
		if (e2bw_alloc_failures() !=
			core->alloc_mark) { /* cJSON says "not JSON" when it ran out of memory */
			cJSON_Delete(error);
			error = e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory");
		}
		e2bw_reply_error(core, req.id, error);
		error = NULL;
	} else if (kind == E2BW_RPC_REQUEST) {
		m = e2bw_method_find(req.method);
		int refused = 1; /* error may be NULL (out of memory) and still be a refusal */
		if (core->shut_down) {
			error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
				"Invalid Request: the provider has shut down");
		} else if (!m) {
			error = e2bw_error_new(E2BW_ERR_METHOD_NOT_FOUND,
				"Method not found: '%.100s' is not an EPP/1 method", req.method);
		} else if (!core->initialized && strcmp(m->name, "initialize") != 0 && !core->host_config) {
			error = e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
				"Invalid Request: call initialize before '%s'", m->name);
		} else if (!core->initialized && strcmp(m->name, "initialize") != 0 &&
			(error = e2bw_handshake_configure(core, core->host_config))) {
			/* the host's own config cannot initialize the core: the request says why */
		} else if (!e2bw_method_served(core, m)) {
			error = e2bw_error_new(E2BW_ERR_UNSUPPORTED,
				"Provider '" E2BW_PROVIDER_ID "' does not support '%s'", m->feature);
			e2bw_error_set_str(error, "feature", m->feature);
		} else if (e2bw_json_has_nul(text, len)) {
			error = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
				"Invalid params: a string holds U+0000 (NUL), which paths and text cannot carry; "
				"send bytes with encoding \"base64\"");
		} else {
			error = e2bw_params_check(m, req.params);
			refused = error != NULL ||
				e2bw_alloc_failures() != core->alloc_mark; /* a check cut short by OOM */
		}
		if (refused)
			e2bw_reply_error(core, req.id, error);
		else
			start_call(core, m, &req);
		error = NULL;
	}
	/* Notifications and stray responses get no answer (JSON-RPC 2.0 §4.1). */
	cJSON_Delete(error);
	e2bw_rpc_request_free(&req);
}

static void submit(e2bw_core *core, const char *msg, size_t len, const detached_in *d, double now_ms)
{
	e2bw_enter(core, now_ms);
	size_t total = len + (d ? d->value_len : 0);
	if (total > E2BW_MAX_MESSAGE_BYTES || total < len) {
		e2bw_reply_error(core, NULL,
			e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
				"Invalid Request: message of %lu bytes exceeds the %u-byte limit",
				(unsigned long)total, (unsigned)E2BW_MAX_MESSAGE_BYTES));
		return;
	}
	process_message(core, msg, len, d);
}

void e2bw_core_submit(e2bw_core *core, const char *msg, size_t len, double now_ms)
{
	submit(core, msg, len, NULL, now_ms);
}

void e2bw_core_submit_detached(e2bw_core *core, const char *msg, size_t len, const char *member,
	size_t member_len, const char *value, size_t value_len, double now_ms)
{
	detached_in d = {member, value ? value : "", member_len, value_len};
	submit(core, msg, len, &d, now_ms);
}

void e2bw_core_set_detach(e2bw_core *core, size_t min_len)
{
	core->detach_min = min_len;
}

void e2bw_core_set_key_hint(e2bw_core *core, const char *text, size_t len)
{
	char *copy = malloc(len + 1);
	if (!copy)
		return; /* the default hint stays: still true, only less precise */
	memcpy(copy, text, len);
	copy[len] = '\0';
	free(core->key_hint);
	core->key_hint = copy;
}

int e2bw_core_set_host_config(e2bw_core *core, const char *text, size_t len)
{
	cJSON *config = cJSON_ParseWithLength(text, len);
	if (!cJSON_IsObject(config)) {
		cJSON_Delete(config);
		return -1;
	}
	cJSON_Delete(core->host_config);
	core->host_config = config;
	return 0;
}

static void on_ndjson_line(void *ctx, const char *line, size_t len)
{
	e2bw_core *core = ctx;
	if (!line) {
		e2bw_reply_error(core, NULL,
			e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
				"Invalid Request: line exceeds the %u-byte message limit",
				(unsigned)E2BW_MAX_MESSAGE_BYTES));
		return;
	}
	process_message(core, line, len, NULL);
}

void e2bw_core_ndjson_feed(e2bw_core *core, const char *data, size_t len, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_ndjson_feed(&core->ndjson, data, len, on_ndjson_line, core);
}

void e2bw_core_ndjson_end(e2bw_core *core, double now_ms)
{
	e2bw_enter(core, now_ms);
	e2bw_ndjson_finish(&core->ndjson, on_ndjson_line, core);
}
