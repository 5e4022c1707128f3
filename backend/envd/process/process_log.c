/* Process lines of a sandbox's log (process_log.h). */
#include "envd/process/process_log.h"

#include "envd/process/process_status.h"
#include "envd/process/process_table.h"
#include "registry/registry.h"
#include "registry/registry_log.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* The partial last line of stdout and of stderr. */
struct process_log_lines {
	char line[2][REGISTRY_LOG_LINE_MAX];
	size_t len[2];
	bool cut[2]; /* the line went past the limit: the rest of it is dropped */
};

/* envd's userCommand: cmd and its args, space-separated, cut to a line. */
static void user_command(const cJSON *config, char *out, size_t cap)
{
	const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(config, "cmd"));
	size_t n = (size_t)snprintf(out, cap, "%s", cmd ? cmd : "");
	const cJSON *a;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(config, "args")) {
		if (n >= cap || !cJSON_IsString(a))
			break;
		n += (size_t)snprintf(out + n, cap - n, " %s", a->valuestring);
	}
}

static cJSON *fields(const struct proc *p, const char *event)
{
	char pid[16];
	snprintf(pid, sizeof pid, "%d", (int)p->ns_pid);
	cJSON *f = cJSON_CreateObject();
	if (f) {
		cJSON_AddStringToObject(f, "service", "envd");
		cJSON_AddStringToObject(f, "event_type", event);
		cJSON_AddStringToObject(f, "pid", pid);
		cJSON_AddStringToObject(f, "sandboxID", p->sb->id);
	}
	return f;
}

void process_log_start(struct proc *p)
{
	if (!p->sb || !p->config)
		return;
	char command[REGISTRY_LOG_LINE_MAX + 1], message[64];
	user_command(p->config, command, sizeof command);
	cJSON *f = fields(p, "process_start");
	if (f)
		cJSON_AddStringToObject(f, "command", command);
	int n = snprintf(message, sizeof message, "Process with pid %d started", (int)p->ns_pid);
	registry_log_add(p->sb, REGISTRY_LOG_INFO, f, message, (size_t)n);
	p->logged = true;
}

int process_log_output_on(struct proc *p)
{
	if (!p->log_lines && !(p->log_lines = calloc(1, sizeof *p->log_lines)))
		return -1;
	return 0;
}

static void line_out(struct proc *p, int stream)
{
	struct process_log_lines *l = p->log_lines;
	if (p->sb) {
		cJSON *f = fields(p, "process_output");
		if (f)
			cJSON_AddStringToObject(f, "stream", stream ? "stderr" : "stdout");
		registry_log_add(p->sb, stream ? REGISTRY_LOG_WARN : REGISTRY_LOG_INFO, f, l->line[stream],
			l->len[stream]);
	}
	l->len[stream] = 0;
}

void process_log_output(struct proc *p, enum proc_output_kind kind, const uint8_t *data, size_t len)
{
	struct process_log_lines *l = p->log_lines;
	if (!l)
		return;
	int s = kind == PROC_OUT_STDERR;
	for (size_t i = 0; i < len; i++) {
		if (data[i] == '\n') {
			if (!l->cut[s])
				line_out(p, s);
			l->cut[s] = false;
			l->len[s] = 0;
		} else if (l->len[s] < sizeof l->line[s]) {
			l->line[s][l->len[s]++] = (char)data[i];
		} else if (!l->cut[s]) {
			line_out(p, s); /* the first REGISTRY_LOG_LINE_MAX bytes of it */
			l->cut[s] = true;
		}
	}
}

void process_log_end(struct proc *p)
{
	for (int s = 0; p->log_lines && s < 2; s++)
		if (p->log_lines->len[s] && !p->log_lines->cut[s])
			line_out(p, s);
	if (!p->sb || !p->logged)
		return;
	char status[96], code[16], message[64];
	process_status_text(p->wait_status, status, sizeof status);
	snprintf(code, sizeof code, "%d", WIFEXITED(p->wait_status) ? WEXITSTATUS(p->wait_status) : -1);
	cJSON *f = fields(p, "process_end");
	if (f) {
		cJSON_AddStringToObject(f, "exit_code", code);
		cJSON_AddStringToObject(f, "status", status);
	}
	int n = snprintf(message, sizeof message, "Process with pid %d ended", (int)p->ns_pid);
	registry_log_add(p->sb, REGISTRY_LOG_INFO, f, message, (size_t)n);
}

void process_log_free(struct proc *p)
{
	free(p->log_lines);
	p->log_lines = NULL;
}
