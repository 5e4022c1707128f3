/* errors.h — the one error table. Every failure the core reports is one of
 * these kinds; each kind has one JSON-RPC code and a stable `data.kind` name
 * that scripts can match. docs/errors.md documents the table. */
#ifndef E2BW_ERRORS_H
#define E2BW_ERRORS_H

#include "cJSON.h"

/*        kind               JSON-RPC  data.kind            default sdk_code */
#define E2BW_ERROR_TABLE(X) \
	X(PARSE_ERROR, -32700, "parse_error", NULL) \
	X(INVALID_REQUEST, -32600, "invalid_request", NULL) \
	X(METHOD_NOT_FOUND, -32601, "method_not_found", NULL) \
	X(INVALID_PARAMS, -32602, "invalid_params", NULL) \
	X(INTERNAL, -32603, "internal", NULL) \
	X(NOT_FOUND, -32002, "not_found", NULL) \
	X(UNSUPPORTED, -32003, "unsupported", "E8004") \
	X(BACKEND, -32000, "backend_error", NULL) \
	X(INVALID_ARGUMENT, -32602, "invalid_argument", NULL) \
	X(UNAUTHENTICATED, -32010, "unauthenticated", NULL) \
	X(PERMISSION_DENIED, -32011, "permission_denied", NULL) \
	X(UNREACHABLE, -32012, "unreachable", NULL) \
	X(TIMEOUT, -32013, "timeout", NULL) \
	X(RATE_LIMITED, -32014, "rate_limited", NULL) \
	X(UNAVAILABLE, -32015, "unavailable", NULL) \
	X(CONFLICT, -32016, "conflict", NULL) \
	X(BAD_RESPONSE, -32017, "bad_response", NULL) \
	X(CANCELED, -32018, "canceled", NULL) \
	X(IS_DIRECTORY, -32602, "is_directory", NULL) \
	X(NOT_DIRECTORY, -32602, "not_directory", NULL) \
	X(ALREADY_EXISTS, -32016, "already_exists", NULL) \
	X(NO_SPACE, -32019, "no_space", NULL) \
	X(TOO_LARGE, -32602, "too_large", NULL) \
	X(BUILD_FAILED, -32020, "build_failed", NULL)

typedef enum e2bw_error_kind {
#define E2BW_X(kind, code, name, sdk) E2BW_ERR_##kind,
	E2BW_ERROR_TABLE(E2BW_X)
#undef E2BW_X
	E2BW_ERR__COUNT
} e2bw_error_kind;

/* sdk_code for a missing sandbox (docs/plugin-contract.md, "Errors": the host
 * shows E2009, exit 4). */
#define E2BW_SDK_SANDBOX_NOT_FOUND "E2009"
/* sdk_codes for the other not-founds (docs/plugin-contract.md, "Errors";
 * docs/errors.md): a template, and a thing inside the sandbox (a process, a
 * file). */
#define E2BW_SDK_TEMPLATE_NOT_FOUND "E4001"
#define E2BW_SDK_IN_SANDBOX_NOT_FOUND "E2001"

int e2bw_error_code(e2bw_error_kind kind);
const char *e2bw_error_name(e2bw_error_kind kind);

/* Builds {"code","message","data":{"kind"[,"sdk_code"]}} with a printf-style
 * message (truncated to a sane length). NULL when out of memory. */
cJSON *e2bw_error_new(e2bw_error_kind kind, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Adds or replaces data.<key>. Both return the error for chaining. */
cJSON *e2bw_error_set_str(cJSON *error, const char *key, const char *value);
cJSON *e2bw_error_set_num(cJSON *error, const char *key, double value);

/* Kind for a non-2xx HTTP status from the backend. */
e2bw_error_kind e2bw_error_kind_for_status(int status);

#endif
