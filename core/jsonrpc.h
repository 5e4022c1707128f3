/* jsonrpc.h — the one envelope codec: JSON-RPC 2.0 as EPP/1 uses it.
 * Parsing validates the envelope only (jsonrpc, id, method, params shape);
 * methods validate their own params (methods.c). */
#ifndef E2BW_JSONRPC_H
#define E2BW_JSONRPC_H

#include <stddef.h>

#include "cJSON.h"

/* cJSON's default nesting limit is 1000; EPP messages are shallow and the
 * wasm stack is small, so refuse deep nesting early. */
#define E2BW_JSON_MAX_DEPTH 64

typedef struct e2bw_rpc_request {
	cJSON *root;     /* owns the parsed message */
	const cJSON *id; /* NULL for a notification; else the id's exact text as
                         a cJSON raw item (echoed byte for byte), or null */
	cJSON *id_raw;   /* owns that raw item */
	const char *method;
	cJSON *params; /* NULL when absent; else an object */
} e2bw_rpc_request;

typedef enum e2bw_rpc_parse_result {
	E2BW_RPC_REQUEST = 0,  /* a request: answer it exactly once */
	E2BW_RPC_NOTIFICATION, /* no id: never answered */
	E2BW_RPC_IGNORED,      /* a response or other message meant for nobody */
	E2BW_RPC_INVALID       /* *error holds the error to send (id: req->id or null) */
} e2bw_rpc_parse_result;

/* Parses one message. On E2BW_RPC_INVALID, *error is set (NULL only when out
 * of memory) and req->id is the id to answer with (NULL = null). Always call
 * e2bw_rpc_request_free() afterwards. */
e2bw_rpc_parse_result e2bw_rpc_parse(const char *text, size_t len, e2bw_rpc_request *req, cJSON **error);
void e2bw_rpc_request_free(e2bw_rpc_request *req);
/* Puts a detached value (e2bw.h) into params.<member>, which must be a
 * string. Returns NULL, or the error to answer with. */
cJSON *e2bw_rpc_attach(e2bw_rpc_request *req, const char *member, size_t member_len, const char *value,
	size_t value_len);

/* Serialise a response or notification (takes ownership of result / error /
 * params). Returns malloc'd text, or NULL when out of memory (a NULL result,
 * error or params is an allocation that failed, never an empty one). */
char *e2bw_rpc_result_text(const cJSON *id, cJSON *result);
char *e2bw_rpc_error_text(const cJSON *id, cJSON *error);
char *e2bw_rpc_notification_text(const char *method, cJSON *params);
/* The id exactly as it is echoed in answers (malloc'd JSON text). */
char *e2bw_rpc_id_text(const cJSON *id);

#endif
