/* methods.h — the one EPP/1 method table: name, feature group, handler and
 * parameter spec. A feature group is declared by `initialize` exactly when
 * every non-optional method of the group has a handler, so the declared
 * features can never run ahead of the code. The table names every handler
 * (handshake.c, sandbox.c, process.c, files*.c), so it sits above them: no
 * handler calls into it (what they share with the spec check is params.c).
 * core.c finds methods here and checks their params with param_spec.h (and
 * e2bw_describe_methods lists the table for hosts). */
#ifndef E2BW_METHODS_H
#define E2BW_METHODS_H

#include "cJSON.h"
#include "calls.h"

typedef enum e2bw_param_type {
	E2BW_P_STRING,     /* non-empty string */
	E2BW_P_SANDBOX_ID, /* bare sandbox id: [A-Za-z0-9_-]{1,128} */
	E2BW_P_SECONDS,    /* number >= 0, < 2^31 */
	E2BW_P_BOOL,
	E2BW_P_OBJECT,
	E2BW_P_STRING_MAP,   /* object whose values are all strings */
	E2BW_P_STATE_FILTER, /* "running" | "paused" or an array of those */
	E2BW_P_LIMIT,        /* integer 1..100 */
	E2BW_P_TEMPLATE_SET, /* E2B fixes it in the template: only null/absent */
	E2BW_P_TEXT,         /* any string, empty included */
	E2BW_P_PID,          /* process id: integer 1..4294967295 or its decimal string */
	E2BW_P_ENCODING,     /* "utf8" (or "utf-8") | "base64", any case */
	E2BW_P_SIGNAL,       /* "SIGTERM" | "SIGKILL" (or TERM, KILL, 15, 9) */
	E2BW_P_DIM,          /* terminal size: integer 1..65535 */
	E2BW_P_USER,         /* a user name: no ':' or control characters */
	E2BW_P_PATH,         /* an absolute path, taken literally: starts with '/' */
	E2BW_P_MODE,         /* POSIX permission bits: integer 0..07777 */
	E2BW_P_OFFSET,       /* byte offset or count: integer 0..2^53 */
	E2BW_P_DEPTH,        /* directory depth: integer 1..64 */
	E2BW_P_COUNT,        /* result count: integer 1..10000 */
	E2BW_P_PORT,         /* TCP port: integer 1..65535 */
	E2BW_P_OPERATION /* "read" | "write" */,
	E2BW_P_DATA,     /* any string; valid base64 when the sibling
                           `encoding` is "base64" (a cross-field check) */
	E2BW_P_RESOURCE, /* cpu count or MiB: integer 1..2147483647 */
	E2BW_P_NO_GPU,   /* gpu: only "none" (0, false, "") can be honoured */
	E2BW_P_ARRAY,    /* an array; its items are checked by the handler */
	E2BW_P_TIME      /* Unix seconds, or an RFC 3339 time ending in Z */
} e2bw_param_type;

typedef struct e2bw_param {
	const char *name;
	e2bw_param_type type;
	int required;
} e2bw_param;

struct e2bw_method {
	const char *name;
	const char *feature;      /* feature group, or "handshake" */
	e2bw_start_fn start;      /* NULL: not implemented (-32003 / E8004) */
	const e2bw_param *params; /* terminated by {NULL}; NULL when not implemented */
	int optional;             /* does not count when deriving features */
};

const e2bw_method *e2bw_method_find(const char *name);
/* 1 when the core serves the method: it has a handler, and its feature is
 * declared (or awaits its contract case and was opened with
 * e2bw_core_preview_feature). Otherwise it answers -32003 (E8004). */
int e2bw_method_served(const e2bw_core *core, const e2bw_method *m);
/* Features to declare in `initialize` (a new array). */
cJSON *e2bw_features_json(void);

#endif
