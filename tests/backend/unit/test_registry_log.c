/* registry/registry_log.c: a sandbox's log keeps its newest entries within
 * REGISTRY_LOG_BYTES, oldest first, a message cut at REGISTRY_LOG_LINE_MAX
 * never inside a UTF-8 character, fields kept as given; freed whole. */
#include "check.h"
#include "registry/registry.h"
#include "registry/registry_log.h"
#include "suites.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

static size_t count(const struct sandbox *sb)
{
	size_t n = 0;
	for (const struct registry_log_entry *e = registry_log_first(sb); e; e = e->next)
		n++;
	return n;
}

void suite_registry_log(void)
{
	struct sandbox sb;
	memset(&sb, 0, sizeof sb);
	CHECK(registry_log_first(&sb) == NULL);

	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "pid", "7");
	registry_log_add(&sb, REGISTRY_LOG_INFO, f, "Process with pid 7 started", 26);
	registry_log_add(&sb, REGISTRY_LOG_WARN, NULL, "second", 6);
	const struct registry_log_entry *e = registry_log_first(&sb);
	CHECK_STR(e->message, "Process with pid 7 started");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(e->fields, "pid")), "7");
	CHECK_STR(registry_log_level_name(e->level), "info");
	CHECK(e->ms > 0);
	CHECK_STR(e->next->message, "second");
	CHECK(cJSON_IsObject(e->next->fields) && cJSON_GetArraySize(e->next->fields) == 0);
	CHECK_STR(registry_log_level_name(e->next->level), "warn");
	CHECK_NUM(count(&sb), 2);

	/* past the budget the oldest go, the newest stay, in order */
	char line[64];
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(line, sizeof line, "line %d", i);
		registry_log_add(&sb, REGISTRY_LOG_INFO, NULL, line, (size_t)n);
	}
	CHECK(sb.log_bytes <= REGISTRY_LOG_BYTES);
	CHECK(count(&sb) > 100 && count(&sb) < 5000);
	CHECK_STR(sb.log_tail->message, "line 4999");
	int expect = 5000 - (int)count(&sb);
	for (e = registry_log_first(&sb); e; e = e->next, expect++) {
		snprintf(line, sizeof line, "line %d", expect);
		CHECK_STR(e->message, line);
	}

	/* a long message is cut at the limit, before a character it would split */
	char big[REGISTRY_LOG_LINE_MAX + 8];
	memset(big, 'a', sizeof big);
	memcpy(big + REGISTRY_LOG_LINE_MAX - 1, "\xc3\xa9", 2); /* é across the limit */
	registry_log_add(&sb, REGISTRY_LOG_ERROR, NULL, big, sizeof big);
	CHECK_NUM(strlen(sb.log_tail->message), REGISTRY_LOG_LINE_MAX - 1);
	/* and one larger than the whole budget still keeps itself */
	static char huge[REGISTRY_LOG_BYTES * 2];
	memset(huge, 'b', sizeof huge);
	registry_log_add(&sb, REGISTRY_LOG_INFO, NULL, huge, sizeof huge);
	CHECK_NUM(strlen(sb.log_tail->message), REGISTRY_LOG_LINE_MAX);

	CHECK_NUM(registry_log_level_parse("debug"), REGISTRY_LOG_DEBUG);
	CHECK_NUM(registry_log_level_parse("error"), REGISTRY_LOG_ERROR);
	CHECK_NUM(registry_log_level_parse("loud"), -1);
	CHECK_NUM(registry_log_level_parse("INFO"), -1);

	registry_log_free(&sb);
	CHECK(registry_log_first(&sb) == NULL && sb.log_tail == NULL && sb.log_bytes == 0);
}
