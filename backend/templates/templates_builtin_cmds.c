/* Built-in templates' start and ready commands (templates_builtin_cmds.h). */
#include "templates/templates_builtin_cmds.h"

#include "lib/text.h"
#include "runtime/runtime_overlay.h"
#include "templates/templates_build.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A command is one line of a file. */
#define BUILTIN_CMD_MAX 4096

struct builtin {
	struct builtin *next;
	char *name;
	struct template_config cfg;
};

static struct builtin *known;

/* The first line of <dir>/<file>, or NULL (missing, empty, out of memory). */
static char *read_line(const char *dir, const char *file)
{
	char *path = text_printf("%s/%s", dir, file);
	FILE *f = path ? fopen(path, "re") : NULL;
	free(path);
	if (!f)
		return NULL;
	char line[BUILTIN_CMD_MAX + 2];
	char *got = fgets(line, sizeof line, f);
	fclose(f);
	if (!got)
		return NULL;
	line[strcspn(line, "\r\n")] = '\0';
	return line[0] ? strdup(line) : NULL;
}

static void builtin_free(struct builtin *b)
{
	build_config_clear(&b->cfg);
	free(b->name);
	free(b);
}

/* NULL too for a template without a start command: only those are kept
 * (a name a request made up costs nothing but the look). */
static struct builtin *load(const char *name)
{
	char *rootfs = runtime_template_rootfs(name);
	if (!rootfs)
		return NULL;
	*strrchr(rootfs, '/') = '\0'; /* <templates>/<name> */
	struct builtin *b = calloc(1, sizeof *b);
	if (b) {
		b->name = strdup(name);
		b->cfg.base = strdup(name);
		b->cfg.envs = cJSON_CreateObject();
		b->cfg.layers = cJSON_CreateArray();
		b->cfg.start_cmd = read_line(rootfs, "START_CMD");
		b->cfg.ready_cmd = b->cfg.start_cmd ? read_line(rootfs, "READY_CMD") : NULL;
	}
	free(rootfs);
	if (b && (!b->name || !b->cfg.base || !b->cfg.envs || !b->cfg.layers || !b->cfg.start_cmd)) {
		builtin_free(b);
		return NULL;
	}
	return b;
}

const struct template_config *templates_builtin_config(const char *name)
{
	struct builtin *b = known;
	while (b && strcmp(b->name, name) != 0)
		b = b->next;
	if (!b && (b = load(name))) {
		b->next = known;
		known = b;
	}
	return b ? &b->cfg : NULL;
}

void templates_builtin_shutdown(void)
{
	while (known) {
		struct builtin *b = known;
		known = b->next;
		builtin_free(b);
	}
}
