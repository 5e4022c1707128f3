/* core_state.h — the core object's state (struct e2bw_core), which every
 * module of the core reads and the files that own each part change: calls
 * (calls.c), HTTP ops (http_ops.c), queued actions (actions.c), streams
 * (stream.c), timers (timers.c), what the data plane knows of each sandbox (envd.c) and the
 * credentials never to send (redact.c). Nothing here is public API
 * (include/e2bw.h); it declares no functions. */
#ifndef E2BW_CORE_STATE_H
#define E2BW_CORE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "cJSON.h"
#include "config.h"
#include "e2bw.h"
#include "ndjson.h"
#include "redact.h"

typedef struct e2bw_action e2bw_action;
typedef struct e2bw_call e2bw_call;
typedef struct e2bw_http_op e2bw_http_op;
typedef struct e2bw_stream e2bw_stream;
typedef struct e2bw_sandbox_info e2bw_sandbox_info;
typedef struct e2bw_timer e2bw_timer;

struct e2bw_core {
	e2bw_config config;
	int initialized;
	int shut_down;
	double now; /* the latest time an input carried */
	uint32_t next_op_id;
	e2bw_call *calls;
	e2bw_http_op *ops;
	e2bw_action *actions, *actions_tail;
	e2bw_action *current; /* the action the accessors describe */
	e2bw_ndjson ndjson;
	e2bw_stream *streams;         /* envd streams (stream.c) */
	e2bw_timer *timers;           /* handlers waiting on time (timers.c) */
	e2bw_sandbox_info *sandboxes; /* what the data plane knows of each sandbox (envd.c) */
	e2bw_secrets secrets;         /* the API key and every envd token seen: never sent (redact.c) */
	e2bw_action *reserve;         /* an answer's worth of memory for out-of-memory errors */
	unsigned long alloc_mark;     /* e2bw_alloc_failures() when the current input arrived */
	size_t detach_min;            /* 0, or the size from which long strings leave detached (e2bw.h) */
	char *key_hint;               /* how this transport's user sets api_key, or NULL (e2bw.h) */
	cJSON *host_config;           /* initialize's config when the host sends none, or NULL (e2bw.h) */
	unsigned previewed;           /* features awaiting their contract case served anyway (methods.c) */
};

#endif
