/* actions.h — what the core asks of its host, queued in order and pulled by
 * e2bw_core_next_action(): EPP messages to send, HTTP requests to perform,
 * requests to cancel. Every outgoing message is scrubbed of credentials
 * here, the one place all pass. Calls only codecs below it (json_text.c,
 * redact.c). */
#ifndef E2BW_ACTIONS_H
#define E2BW_ACTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "cJSON.h"
#include "core_state.h"

/* One pending output. */
struct e2bw_action {
	int kind;
	int message; /* a SEND's e2bw_message bits */
	uint32_t op;
	char *text;
	size_t text_len;
	uint8_t *body;
	size_t body_len;
	struct e2bw_action *next;
};

/* Queue an outgoing EPP message of kind `message` (e2bw_message bits); takes
 * ownership of text (NULL = out of memory, reported as an internal error to
 * nobody: the host's own timeout covers it). */
void e2bw_emit_text(e2bw_core *core, int message, char *text);
/* Returns -1 when the message was dropped (out of memory). */
int e2bw_emit_text_len(e2bw_core *core, int message, char *text, size_t len);
/* Queues the answer to request `id` (text may be NULL: out of memory), with
 * E2BW_MESSAGE_LAST unless `last` is 0 (a stream follows). When it cannot be
 * queued, a -32603 answer is sent from memory reserved for it, so every
 * request is still answered exactly once. */
void e2bw_emit_answer(e2bw_core *core, const cJSON *id, char *text, int last);
/* (Re)reserves that memory; -1 when out of memory. */
int e2bw_reserve_answer(e2bw_core *core);
/* Queues a message whose `member` string travels beside it (e2bw.h's
 * detached strings); takes ownership of text and value. Both are scrubbed. */
int e2bw_emit_detached(e2bw_core *core, int message, char *text, size_t len, int member, char *value,
	size_t value_len);
int e2bw_emit_http(e2bw_core *core, uint32_t op, char *head, uint8_t *body, size_t body_len);
void e2bw_emit_cancel(e2bw_core *core, uint32_t op);
void e2bw_actions_free(e2bw_core *core);

#endif
