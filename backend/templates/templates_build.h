/* One build of a template: its status, its log (E2B's BuildLogEntry list,
 * read by the status route from an offset), the reason it failed and the
 * configuration it produced. Calls lib/ only. */
#ifndef E2B_BACKEND_TEMPLATES_BUILD_H
#define E2B_BACKEND_TEMPLATES_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

#define TEMPLATES_ID_LEN 20             /* [a-z0-9], like a sandbox's */
#define TEMPLATES_BUILD_ID_LEN 36       /* a UUID, as E2B's */
#define TEMPLATES_MAX_LOG_ENTRIES 20000 /* past it, further entries are dropped */

enum build_status {
	BUILD_WAITING,
	BUILD_BUILDING,
	BUILD_READY,
	BUILD_ERROR
};

/* What a sandbox of the template starts with. */
struct template_config {
	char *base;           /* the built-in template at the stack's bottom ("base") */
	struct cJSON *layers; /* the stack: layer ids, bottom first (templates_stack.h) */
	struct cJSON *envs;   /* object of strings, never NULL */
	char *workdir;        /* NULL: the user's home */
	char *user;           /* NULL: "user" */
	char *start_cmd;      /* NULL: none */
	char *ready_cmd;      /* NULL: ready as soon as the start command runs */
};

struct template_build {
	struct template_build *next; /* the template's builds, newest first */
	char id[TEMPLATES_BUILD_ID_LEN + 1];
	char template_id[TEMPLATES_ID_LEN + 1];
	enum build_status status;
	struct cJSON *logs;            /* array of BuildLogEntry */
	char *reason;                  /* status error: the message */
	char *reason_step;             /* "base", "1".., "finalize", or NULL */
	struct template_config config; /* valid once ready */
	int cpu_count, memory_mb, disk_mb;
	int64_t created_ms, updated_ms, finished_ms;
	struct cJSON *tags; /* the tags it gets once ready (array of strings) */
	void *exec;         /* the running executor (templates_exec.h), or NULL */
};

struct template_build *build_new(const char *template_id, int cpu, int memory_mb, int disk_mb);
void build_free(struct template_build *b);
void build_config_clear(struct template_config *c);
int build_config_copy(struct template_config *dst, const struct template_config *src);

/* Appends a log entry (level "info", "warn", "error", "debug"); step may be NULL. */
void build_log(struct template_build *b, const char *level, const char *step, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A command's output as log entries, a line each (stream 0: stdout,
 * "info"; 1: stderr, "warn"); a line longer than BUILD_LINE_MAX is cut. */
#define BUILD_LINE_MAX 4000
struct build_lines {
	char line[2][BUILD_LINE_MAX + 1];
	size_t len[2];
};
void build_log_output(struct template_build *b, const char *step, struct build_lines *l, int stream,
	const uint8_t *data, size_t len);
/* Logs what is left of each stream's last line. */
void build_log_flush(struct template_build *b, const char *step, struct build_lines *l);
/* Ends the build: ready, or error with the message and the step. */
void build_finish(struct template_build *b, const char *step, const char *reason);
const char *build_status_name(enum build_status s);
/* TemplateBuildInfo with the log entries from offset on (at most limit). */
struct cJSON *build_info_json(const struct template_build *b, size_t offset, size_t limit);

#endif
