/* templates/ — the templates users build through E2B's template API: the
 * catalog (names, tags, builds), the build executor that runs a build's
 * steps in a sandbox, uploaded build files, and a template's start and
 * ready commands in each of its sandboxes.
 * Owns: struct template and its builds.
 * May call: registry/ (build sandboxes), envd/process/ (commands in them,
 * process_run.h), runtime/ (a sandbox's root and ids), store/ (the layers
 * of a template's stack, its record), http/ and lib/.
 * api/ calls it (its routes are api/api_templates.c).
 *
 * This header is templates.c's: the catalog, in memory. */
#ifndef E2B_BACKEND_TEMPLATES_H
#define E2B_BACKEND_TEMPLATES_H

#include "templates/templates_build.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

#define TEMPLATES_NAME_MAX 128
#define TEMPLATES_TAG_MAX 128
#define TEMPLATES_DEFAULT_TAG "default"

struct template
{
	struct template *next;
	char id[TEMPLATES_ID_LEN + 1];
	char *name;                    /* its alias */
	struct cJSON *tags;            /* {tag: {"buildID", "createdAt"}} */
	struct template_build *builds; /* newest first */
	int64_t created_ms, updated_ms, last_spawned_ms;
	int64_t spawn_count;
	bool builtin; /* a built-in one (templates_builtin.h): public */
};

struct templates {
	struct template *head;
	size_t count;
};

/* Whether name is a template name (and tag, when given, a tag): lowercase
 * letters, digits, '.', '_', '-', starting with a letter or digit. */
bool templates_valid_name(const char *name, size_t max);
/* Splits "name[:tag]" into name and tag ("" when none); -1 when malformed. */
int templates_split_ref(const char *ref, char name[TEMPLATES_NAME_MAX + 1], char tag[TEMPLATES_TAG_MAX + 1]);

/* By id or name (a ":tag" suffix is ignored). */
struct template *templates_find(struct templates *t, const char *id_or_name);
struct template *templates_add(struct templates *t, const char *name);
/* Unlinks and frees it; its running builds must have been stopped. */
void templates_remove(struct templates *t, struct template *tpl);
void templates_free_all(struct templates *t);

struct template_build *templates_find_build(const struct template *tpl, const char *build_id);
/* The build a reference starts: the tag's build, or for no tag the
 * "default" tag's, else the newest ready build. NULL when none is ready. */
struct template_build *templates_ready_build(const struct template *tpl, const char *tag);
/* Points tag at build (replacing an older assignment). */
int templates_tag(struct template *tpl, const char *tag, const char *build_id);
/* A build that ended well: its template's tags (a list of strings) point
 * at it, or the default tag when none could. The template, or NULL when it
 * is gone. */
struct template *templates_tag_build(struct templates *catalog, const char *template_id,
	const struct cJSON *tags, const char *build_id);
/* Tags of the template as E2B's TemplateTag list. */
struct cJSON *templates_tags_json(const struct template *tpl);
/* E2B's Template (list item) and TemplateWithBuilds shapes. */
struct cJSON *templates_json(const struct template *tpl);
struct cJSON *templates_with_builds_json(const struct template *tpl);

#endif
