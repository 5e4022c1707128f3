/* A template build's record and log (templates_build.h). */
#include "templates/templates_build.h"

#include "lib/clock.h"
#include "lib/random.h"

#include <cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int uuid4(char out[TEMPLATES_BUILD_ID_LEN + 1])
{
	unsigned char b[16];
	if (random_bytes(b, sizeof b) != 0)
		return -1;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, TEMPLATES_BUILD_ID_LEN + 1,
		"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

struct template_build *build_new(const char *template_id, int cpu, int memory_mb, int disk_mb)
{
	struct template_build *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->logs = cJSON_CreateArray();
	b->config.envs = cJSON_CreateObject();
	if (!b->logs || !b->config.envs || uuid4(b->id) != 0) {
		build_free(b);
		return NULL;
	}
	snprintf(b->template_id, sizeof b->template_id, "%s", template_id);
	b->status = BUILD_WAITING;
	b->cpu_count = cpu;
	b->memory_mb = memory_mb;
	b->disk_mb = disk_mb;
	b->created_ms = b->updated_ms = clock_now_ms();
	return b;
}

void build_config_clear(struct template_config *c)
{
	free(c->base);
	cJSON_Delete(c->envs);
	cJSON_Delete(c->layers);
	free(c->workdir);
	free(c->user);
	free(c->start_cmd);
	free(c->ready_cmd);
	memset(c, 0, sizeof *c);
}

static int dup_or_null(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -1 : 0;
}

int build_config_copy(struct template_config *dst, const struct template_config *src)
{
	memset(dst, 0, sizeof *dst);
	dst->envs = cJSON_Duplicate(src->envs, true);
	dst->layers = src->layers ? cJSON_Duplicate(src->layers, true) : cJSON_CreateArray();
	if (!dst->envs || !dst->layers || dup_or_null(&dst->base, src->base) ||
		dup_or_null(&dst->workdir, src->workdir) || dup_or_null(&dst->user, src->user) ||
		dup_or_null(&dst->start_cmd, src->start_cmd) ||
		dup_or_null(&dst->ready_cmd, src->ready_cmd)) {
		build_config_clear(dst);
		return -1;
	}
	return 0;
}

void build_free(struct template_build *b)
{
	if (!b)
		return;
	cJSON_Delete(b->logs);
	cJSON_Delete(b->tags);
	free(b->reason);
	free(b->reason_step);
	build_config_clear(&b->config);
	free(b);
}

static cJSON *log_entry(const char *level, const char *step, const char *message, int64_t ms)
{
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(ms, when);
	cJSON *e = cJSON_CreateObject();
	if (!e)
		return NULL;
	cJSON_AddStringToObject(e, "level", level);
	cJSON_AddStringToObject(e, "message", message);
	if (step)
		cJSON_AddStringToObject(e, "step", step);
	cJSON_AddStringToObject(e, "timestamp", when);
	return e;
}

void build_log(struct template_build *b, const char *level, const char *step, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* A build that prints without end keeps its first entries: the offsets
	 * clients hold stay valid; the failure reason still has its own. */
	if (cJSON_GetArraySize(b->logs) >= TEMPLATES_MAX_LOG_ENTRIES)
		return;
	b->updated_ms = clock_now_ms();
	cJSON *e = log_entry(level, step, msg, b->updated_ms);
	if (e)
		cJSON_AddItemToArray(b->logs, e);
}

static void flush(struct template_build *b, const char *step, struct build_lines *l, int k)
{
	if (l->len[k] > 0) {
		l->line[k][l->len[k]] = '\0';
		build_log(b, k ? "warn" : "info", step, "%s", l->line[k]);
	}
	l->len[k] = 0;
}

void build_log_output(struct template_build *b, const char *step, struct build_lines *l, int k,
	const uint8_t *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n' && l->len[k] == 0) {
			build_log(b, k ? "warn" : "info", step, "%s", "");
			continue;
		}
		if (data[i] == '\n' || l->len[k] == BUILD_LINE_MAX) {
			flush(b, step, l, k);
			if (data[i] == '\n')
				continue;
		}
		l->line[k][l->len[k]++] = (char)data[i];
	}
}

void build_log_flush(struct template_build *b, const char *step, struct build_lines *l)
{
	flush(b, step, l, 0);
	flush(b, step, l, 1);
}

void build_finish(struct template_build *b, const char *step, const char *reason)
{
	b->finished_ms = b->updated_ms = clock_now_ms();
	if (!reason) {
		b->status = BUILD_READY;
		return;
	}
	b->status = BUILD_ERROR;
	free(b->reason);
	free(b->reason_step);
	b->reason = strdup(reason);
	b->reason_step = step ? strdup(step) : NULL;
}

const char *build_status_name(enum build_status s)
{
	switch (s) {
	case BUILD_WAITING:
		return "waiting";
	case BUILD_BUILDING:
		return "building";
	case BUILD_READY:
		return "ready";
	case BUILD_ERROR:
		break;
	}
	return "error";
}

/* The reason's own entries: the log's last 20 error-or-output lines. */
static cJSON *reason_json(const struct template_build *b)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *entries = cJSON_CreateArray();
	if (!r || !entries) {
		cJSON_Delete(r);
		cJSON_Delete(entries);
		return NULL;
	}
	cJSON_AddStringToObject(r, "message", b->reason ? b->reason : "unknown error");
	if (b->reason_step)
		cJSON_AddStringToObject(r, "step", b->reason_step);
	int n = cJSON_GetArraySize(b->logs);
	for (int i = n > 20 ? n - 20 : 0; i < n; i++)
		cJSON_AddItemToArray(entries, cJSON_Duplicate(cJSON_GetArrayItem(b->logs, i), true));
	cJSON_AddItemToObject(r, "logEntries", entries);
	return r;
}

cJSON *build_info_json(const struct template_build *b, size_t offset, size_t limit)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *entries = cJSON_CreateArray();
	if (!o || !entries) {
		cJSON_Delete(o);
		cJSON_Delete(entries);
		return NULL;
	}
	cJSON_AddStringToObject(o, "buildID", b->id);
	cJSON_AddStringToObject(o, "templateID", b->template_id);
	cJSON_AddStringToObject(o, "status", build_status_name(b->status));
	size_t n = (size_t)cJSON_GetArraySize(b->logs);
	for (size_t i = offset; i < n && i - offset < limit; i++)
		cJSON_AddItemToArray(entries, cJSON_Duplicate(cJSON_GetArrayItem(b->logs, (int)i), true));
	cJSON_AddItemToObject(o, "logEntries", entries);
	cJSON_AddItemToObject(o, "logs", cJSON_CreateArray());
	if (b->status == BUILD_ERROR)
		cJSON_AddItemToObject(o, "reason", reason_json(b));
	return o;
}
