/* A sandbox's log, as E2B keeps one of each sandbox (GET /sandboxes/{id}/logs,
 * SandboxLogEntry): what envd logs of it (each process started and ended
 * through the process service) and its template's start command's output,
 * a line each. In memory only, the newest within REGISTRY_LOG_BYTES a
 * sandbox: the oldest go first. Calls lib/ only. */
#ifndef E2B_BACKEND_REGISTRY_LOG_H
#define E2B_BACKEND_REGISTRY_LOG_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct sandbox;

#define REGISTRY_LOG_BYTES (64 * 1024) /* a sandbox's log, messages and fields */
#define REGISTRY_LOG_LINE_MAX 1024     /* a longer message is cut (UTF-8 kept whole) */

enum registry_log_level {
	REGISTRY_LOG_DEBUG,
	REGISTRY_LOG_INFO,
	REGISTRY_LOG_WARN,
	REGISTRY_LOG_ERROR
};

struct registry_log_entry {
	struct registry_log_entry *next; /* newer */
	int64_t ms;
	enum registry_log_level level;
	char *message;
	struct cJSON *fields; /* object of strings, never NULL */
	size_t bytes;         /* what it counts against REGISTRY_LOG_BYTES */
};

/* Appends an entry now: fields (an object of strings, taken; NULL for
 * none) and the message of len bytes (cut at REGISTRY_LOG_LINE_MAX, bytes
 * that are not UTF-8 replaced when it is written out). Out of memory: the
 * entry is dropped. */
void registry_log_add(struct sandbox *sb, enum registry_log_level level, struct cJSON *fields,
	const char *message, size_t len);
/* The oldest entry, then ->next. */
const struct registry_log_entry *registry_log_first(const struct sandbox *sb);
/* "debug", "info", "warn", "error"; -1 from registry_log_level_parse for another name. */
const char *registry_log_level_name(enum registry_log_level level);
int registry_log_level_parse(const char *name);
/* Frees the log (when the sandbox goes). */
void registry_log_free(struct sandbox *sb);

#endif
