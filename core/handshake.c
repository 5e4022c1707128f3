/* handshake.c — initialize and shutdown (handshake.h). */
#include <string.h>

#include "config.h"
#include "errors.h"
#include "handshake.h"
#include "json_add.h"
#include "redact.h"
#include "stream.h"

cJSON *e2bw_handshake_configure(e2bw_core *core, const cJSON *config)
{
	cJSON *error = e2bw_config_parse(&core->config, config, core->key_hint);
	if (error || e2bw_secrets_add(&core->secrets, core->config.api_key, 0) != 0)
		return error ? error : e2bw_error_new(E2BW_ERR_INTERNAL, "Out of memory");
	core->initialized = 1;
	cJSON_Delete(core->host_config); /* not needed again */
	core->host_config = NULL;
	return NULL;
}

void e2bw_handshake_initialize(e2bw_core *core, e2bw_call *call, cJSON *(*features)(void))
{
	if (core->initialized) {
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_INVALID_REQUEST,
				"Invalid Request: initialize was already called"));
		return;
	}
	const cJSON *protocol = cJSON_GetObjectItemCaseSensitive(call->params, "protocol");
	if (cJSON_IsString(protocol) && strcmp(protocol->valuestring, "epp/1") != 0 &&
		strcmp(protocol->valuestring, "node/1") != 0) {
		cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: protocol '%.40s' is not spoken here (epp/1)", protocol->valuestring);
		e2bw_call_fail(core, call, e2bw_error_set_str(e, "field", "protocol"));
		return;
	}
	cJSON *error =
		e2bw_handshake_configure(core, cJSON_GetObjectItemCaseSensitive(call->params, "config"));
	if (error) {
		e2bw_call_fail(core, call, error);
		return;
	}

	cJSON *result = cJSON_CreateObject();
	cJSON *provider = cJSON_AddObjectToObject(result, "provider");
	cJSON_AddStringToObject(result, "protocol", "epp/1");
	cJSON_AddStringToObject(provider, "id", E2BW_PROVIDER_ID);
	cJSON_AddStringToObject(provider, "version", E2BW_VERSION);
	e2bw_add(result, "features", features());
	cJSON *limits = cJSON_AddObjectToObject(result, "limits");
	cJSON_AddNumberToObject(limits, "max_message_bytes", E2BW_MAX_MESSAGE_BYTES);
	cJSON_AddNumberToObject(limits, "request_timeout", core->config.request_timeout_ms / 1000.0);
	e2bw_call_succeed(core, call, result);
}

void e2bw_handshake_shutdown(e2bw_core *core, e2bw_call *call)
{
	/* Every other call in flight still gets its one answer. */
	e2bw_call *c = core->calls;
	while (c) {
		e2bw_call *next = c->next;
		if (c != call)
			e2bw_call_fail(core, c,
				e2bw_error_new(E2BW_ERR_CANCELED, "Canceled: the provider is shutting down"));
		c = next;
	}
	e2bw_streams_cancel_all(core);
	core->shut_down = 1;
	e2bw_call_succeed(core, call, cJSON_CreateObject());
}
