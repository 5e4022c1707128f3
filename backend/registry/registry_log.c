/* A sandbox's log (registry_log.h). */
#include "registry/registry_log.h"

#include "lib/clock.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static void entry_free(struct registry_log_entry *e)
{
	cJSON_Delete(e->fields);
	free(e->message);
	free(e);
}

static size_t fields_bytes(const cJSON *fields)
{
	size_t n = 0;
	const cJSON *f;
	cJSON_ArrayForEach(f, fields) {
		n += strlen(f->string) + (cJSON_IsString(f) ? strlen(f->valuestring) : 0);
	}
	return n;
}

void registry_log_add(struct sandbox *sb, enum registry_log_level level, cJSON *fields, const char *message,
	size_t len)
{
	if (len > REGISTRY_LOG_LINE_MAX) {
		len = REGISTRY_LOG_LINE_MAX;
		while (len > 0 && ((unsigned char)message[len] & 0xC0) == 0x80)
			len--; /* not inside a character */
	}
	struct registry_log_entry *e = calloc(1, sizeof *e);
	if (!e || !(e->message = malloc(len + 1)) || (!fields && !(fields = cJSON_CreateObject()))) {
		cJSON_Delete(fields);
		if (e)
			free(e->message);
		free(e);
		return;
	}
	memcpy(e->message, message, len);
	e->message[len] = '\0';
	e->fields = fields;
	e->ms = clock_now_ms();
	e->level = level;
	e->bytes = sizeof *e + len + fields_bytes(fields);
	if (sb->log_tail)
		sb->log_tail->next = e;
	else
		sb->log_head = e;
	sb->log_tail = e;
	sb->log_bytes += e->bytes;
	while (sb->log_bytes > REGISTRY_LOG_BYTES && sb->log_head != e) {
		struct registry_log_entry *old = sb->log_head;
		sb->log_head = old->next;
		sb->log_bytes -= old->bytes;
		entry_free(old);
	}
}

const struct registry_log_entry *registry_log_first(const struct sandbox *sb)
{
	return sb->log_head;
}

static const char *const level_names[] = {"debug", "info", "warn", "error"};

const char *registry_log_level_name(enum registry_log_level level)
{
	return level_names[level];
}

int registry_log_level_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, level_names[i]) == 0)
			return i;
	return -1;
}

void registry_log_free(struct sandbox *sb)
{
	while (sb->log_head) {
		struct registry_log_entry *next = sb->log_head->next;
		entry_free(sb->log_head);
		sb->log_head = next;
	}
	sb->log_tail = NULL;
	sb->log_bytes = 0;
}
