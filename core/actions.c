/* actions.c — the outgoing action queue (FIFO). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "core_state.h"
#include "json_text.h"
#include "redact.h"

static int push(e2bw_core *core, e2bw_action *a)
{
	if (core->actions_tail)
		core->actions_tail->next = a;
	else
		core->actions = a;
	core->actions_tail = a;
	return 0;
}

void e2bw_emit_text(e2bw_core *core, int message, char *text)
{
	if (text)
		e2bw_emit_text_len(core, message, text, strlen(text));
}

int e2bw_emit_text_len(e2bw_core *core, int message, char *text, size_t len)
{
	if (!text)
		return -1;
	text = e2bw_redact_json(&core->secrets, text, &len, core->config.envd_passthrough);
	if (!text)
		return -1;
	e2bw_action *a = calloc(1, sizeof *a);
	if (!a) {
		free(text);
		return -1;
	}
	a->kind = E2BW_ACTION_SEND;
	a->message = message;
	a->text = text;
	a->text_len = len;
	push(core, a);
	return 0;
}

int e2bw_emit_detached(e2bw_core *core, int message, char *text, size_t len, int member, char *value,
	size_t value_len)
{
	value = value ? e2bw_redact_bytes(&core->secrets, value, &value_len) : NULL;
	if (!value) {
		free(text);
		return -1;
	}
	if (e2bw_emit_text_len(core, message, text, len) != 0) {
		free(value);
		return -1;
	}
	core->actions_tail->op = (uint32_t)member |
		(e2bw_is_ascii((const uint8_t *)value, value_len) ? E2BW_DETACHED_ASCII : 0);
	core->actions_tail->body = (uint8_t *)value;
	core->actions_tail->body_len = value_len;
	return 0;
}

#define RESERVE_TEXT 512

int e2bw_reserve_answer(e2bw_core *core)
{
	if (core->reserve)
		return 0;
	e2bw_action *a = calloc(1, sizeof *a);
	char *text = malloc(RESERVE_TEXT);
	if (!a || !text) {
		free(a);
		free(text);
		return -1;
	}
	a->kind = E2BW_ACTION_SEND;
	a->text = text;
	core->reserve = a;
	return 0;
}

void e2bw_emit_answer(e2bw_core *core, const cJSON *id, char *text, int last)
{
	int message = E2BW_MESSAGE_ANSWER | (last ? E2BW_MESSAGE_LAST : 0);
	if (e2bw_emit_text_len(core, message, text, text ? strlen(text) : 0) == 0)
		return;
	e2bw_action *a = core->reserve;
	if (!a)
		return; /* two failures in a row with nothing reserved: nothing left to answer with */
	core->reserve = NULL;
	/* ids arrive as raw items holding their text (jsonrpc.c); one too long
   * for the reserve is answered as null */
	const char *id_text =
		cJSON_IsRaw(id) && strlen(id->valuestring) < RESERVE_TEXT - 120 ? id->valuestring : "null";
	int n = snprintf(a->text, RESERVE_TEXT,
		"{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32603,\"message\":\"Out of memory\",\"data\":{\"kind\":\"internal\"}}}",
		id_text);
	a->text_len = (size_t)n;
	a->message = message; /* a stream that follows still ends with its last message */
	push(core, a);
	e2bw_reserve_answer(core); /* for the next one */
}

int e2bw_emit_http(e2bw_core *core, uint32_t op, char *head, uint8_t *body, size_t body_len)
{
	e2bw_action *a = calloc(1, sizeof *a);
	if (!a) {
		free(head);
		free(body);
		return -1;
	}
	a->kind = E2BW_ACTION_HTTP;
	a->op = op;
	a->text = head;
	a->text_len = strlen(head);
	a->body = body;
	a->body_len = body_len;
	push(core, a);
	return 0;
}

void e2bw_emit_cancel(e2bw_core *core, uint32_t op)
{
	e2bw_action *a = calloc(1, sizeof *a);
	if (!a)
		return;
	a->kind = E2BW_ACTION_CANCEL;
	a->op = op;
	push(core, a);
}

static void action_free(e2bw_action *a)
{
	if (!a)
		return;
	free(a->text);
	free(a->body);
	free(a);
}

int e2bw_core_next_action(e2bw_core *core)
{
	e2bw_reserve_answer(core); /* if an answer used it up */
	action_free(core->current);
	core->current = core->actions;
	if (!core->current)
		return E2BW_ACTION_NONE;
	core->actions = core->current->next;
	if (!core->actions)
		core->actions_tail = NULL;
	core->current->next = NULL;
	return core->current->kind;
}

uint32_t e2bw_action_op(const e2bw_core *core)
{
	return core->current ? core->current->op : 0;
}
const char *e2bw_action_text(const e2bw_core *core)
{
	return core->current ? core->current->text : NULL;
}
size_t e2bw_action_text_len(const e2bw_core *core)
{
	return core->current ? core->current->text_len : 0;
}
const uint8_t *e2bw_action_body(const e2bw_core *core)
{
	return core->current ? core->current->body : NULL;
}
size_t e2bw_action_body_len(const e2bw_core *core)
{
	return core->current ? core->current->body_len : 0;
}
int e2bw_action_message(const e2bw_core *core)
{
	return core->current ? core->current->message : 0;
}

void e2bw_actions_free(e2bw_core *core)
{
	action_free(core->reserve);
	core->reserve = NULL;
	action_free(core->current);
	core->current = NULL;
	while (core->actions) {
		e2bw_action *next = core->actions->next;
		action_free(core->actions);
		core->actions = next;
	}
	core->actions_tail = NULL;
}
