/* The catalog of built templates (templates.h). */
#include "templates/templates.h"

#include "lib/clock.h"
#include "lib/random.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

bool templates_valid_name(const char *name, size_t max)
{
	size_t n = strlen(name);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
			return false;
	}
	return true;
}

int templates_split_ref(const char *ref, char name[TEMPLATES_NAME_MAX + 1], char tag[TEMPLATES_TAG_MAX + 1])
{
	const char *colon = strchr(ref, ':');
	size_t n = colon ? (size_t)(colon - ref) : strlen(ref);
	if (n > TEMPLATES_NAME_MAX)
		return -1;
	memcpy(name, ref, n);
	name[n] = '\0';
	tag[0] = '\0';
	if (colon) {
		if (strlen(colon + 1) > TEMPLATES_TAG_MAX)
			return -1;
		strcpy(tag, colon + 1);
		if (!templates_valid_name(tag, TEMPLATES_TAG_MAX))
			return -1;
	}
	return templates_valid_name(name, TEMPLATES_NAME_MAX) ? 0 : -1;
}

struct template *templates_find(struct templates *t, const char *id_or_name)
{
	const char *colon = strchr(id_or_name, ':');
	size_t n = colon ? (size_t)(colon - id_or_name) : strlen(id_or_name);
	for (struct template *tpl = t->head; tpl; tpl = tpl->next) {
		if ((strlen(tpl->id) == n && memcmp(tpl->id, id_or_name, n) == 0) ||
			(strlen(tpl->name) == n && memcmp(tpl->name, id_or_name, n) == 0))
			return tpl;
	}
	return NULL;
}

struct template *templates_add(struct templates *t, const char *name)
{
	struct template *tpl = calloc(1, sizeof *tpl);
	if (!tpl)
		return NULL;
	tpl->name = strdup(name);
	tpl->tags = cJSON_CreateObject();
	if (!tpl->name || !tpl->tags || random_lower_alnum(tpl->id, TEMPLATES_ID_LEN) != 0) {
		free(tpl->name);
		cJSON_Delete(tpl->tags);
		free(tpl);
		return NULL;
	}
	tpl->created_ms = tpl->updated_ms = clock_now_ms();
	tpl->next = t->head;
	t->head = tpl;
	t->count++;
	return tpl;
}

static void template_free(struct template *tpl)
{
	while (tpl->builds) {
		struct template_build *b = tpl->builds;
		tpl->builds = b->next;
		build_free(b);
	}
	cJSON_Delete(tpl->tags);
	free(tpl->name);
	free(tpl);
}

void templates_remove(struct templates *t, struct template *tpl)
{
	for (struct template **pp = &t->head; *pp; pp = &(*pp)->next) {
		if (*pp == tpl) {
			*pp = tpl->next;
			t->count--;
			break;
		}
	}
	template_free(tpl);
}

void templates_free_all(struct templates *t)
{
	while (t->head) {
		struct template *tpl = t->head;
		t->head = tpl->next;
		template_free(tpl);
	}
	t->count = 0;
}

struct template_build *templates_find_build(const struct template *tpl, const char *build_id)
{
	for (struct template_build *b = tpl->builds; b; b = b->next)
		if (strcmp(b->id, build_id) == 0)
			return b;
	return NULL;
}

struct template_build *templates_ready_build(const struct template *tpl, const char *tag)
{
	const char *want = tag && tag[0] ? tag : TEMPLATES_DEFAULT_TAG;
	cJSON *assigned = cJSON_GetObjectItemCaseSensitive(tpl->tags, want);
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(assigned, "buildID"));
	if (id) {
		struct template_build *b = templates_find_build(tpl, id);
		return b && b->status == BUILD_READY ? b : NULL;
	}
	if (tag && tag[0])
		return NULL;
	for (struct template_build *b = tpl->builds; b; b = b->next)
		if (b->status == BUILD_READY)
			return b;
	return NULL;
}

int templates_tag(struct template *tpl, const char *tag, const char *build_id)
{
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(clock_now_ms(), when);
	cJSON *t = cJSON_CreateObject();
	if (!t || !cJSON_AddStringToObject(t, "buildID", build_id) ||
		!cJSON_AddStringToObject(t, "createdAt", when)) {
		cJSON_Delete(t);
		return -1;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(tpl->tags, tag);
	cJSON_AddItemToObject(tpl->tags, tag, t);
	tpl->updated_ms = clock_now_ms();
	return 0;
}

struct template *templates_tag_build(struct templates *catalog, const char *template_id, const cJSON *tags,
	const char *build_id)
{
	struct template *tpl = templates_find(catalog, template_id);
	const cJSON *t;
	bool tagged = false;
	cJSON_ArrayForEach(t, tags) {
		if (tpl && cJSON_IsString(t))
			tagged |= templates_tag(tpl, t->valuestring, build_id) == 0;
	}
	if (tpl && !tagged)
		templates_tag(tpl, TEMPLATES_DEFAULT_TAG, build_id);
	return tpl;
}

cJSON *templates_tags_json(const struct template *tpl)
{
	cJSON *list = cJSON_CreateArray();
	const cJSON *t;
	cJSON_ArrayForEach(t, tpl->tags) {
		cJSON *item = cJSON_Duplicate(t, true);
		if (item) {
			cJSON_AddStringToObject(item, "tag", t->string);
			cJSON_AddItemToArray(list, item);
		}
	}
	return list;
}

static void add_time(cJSON *o, const char *name, int64_t ms)
{
	char when[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(ms, when);
	cJSON_AddStringToObject(o, name, when);
}

static void add_names(cJSON *o, const struct template *tpl)
{
	const char *names[] = {tpl->name};
	cJSON_AddItemToObject(o, "aliases", cJSON_CreateStringArray(names, 1));
	cJSON_AddItemToObject(o, "names", cJSON_CreateStringArray(names, 1));
	cJSON_AddStringToObject(o, "templateID", tpl->id);
	cJSON_AddBoolToObject(o, "public", tpl->builtin);
	add_time(o, "createdAt", tpl->created_ms);
	add_time(o, "updatedAt", tpl->updated_ms);
	if (tpl->last_spawned_ms)
		add_time(o, "lastSpawnedAt", tpl->last_spawned_ms);
	else
		cJSON_AddNullToObject(o, "lastSpawnedAt");
	cJSON_AddNumberToObject(o, "spawnCount", (double)tpl->spawn_count);
}

cJSON *templates_json(const struct template *tpl)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add_names(o, tpl);
	const struct template_build *shown = templates_ready_build(tpl, NULL);
	if (!shown)
		shown = tpl->builds;
	int count = 0;
	for (const struct template_build *b = tpl->builds; b; b = b->next)
		count++;
	cJSON_AddNumberToObject(o, "buildCount", count);
	cJSON_AddStringToObject(o, "buildID", shown ? shown->id : "");
	cJSON_AddStringToObject(o, "buildStatus", build_status_name(shown ? shown->status : BUILD_WAITING));
	cJSON_AddNumberToObject(o, "cpuCount", shown ? shown->cpu_count : 0);
	cJSON_AddNumberToObject(o, "memoryMB", shown ? shown->memory_mb : 0);
	cJSON_AddNumberToObject(o, "diskSizeMB", shown ? shown->disk_mb : 0);
	cJSON_AddNullToObject(o, "createdBy");
	cJSON_AddStringToObject(o, "envdVersion", "0.6.13");
	return o;
}

cJSON *templates_with_builds_json(const struct template *tpl)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *builds = cJSON_CreateArray();
	if (!o || !builds) {
		cJSON_Delete(o);
		cJSON_Delete(builds);
		return NULL;
	}
	add_names(o, tpl);
	for (const struct template_build *b = tpl->builds; b; b = b->next) {
		cJSON *j = cJSON_CreateObject();
		if (!j)
			continue;
		cJSON_AddStringToObject(j, "buildID", b->id);
		cJSON_AddStringToObject(j, "status", build_status_name(b->status));
		cJSON_AddNumberToObject(j, "cpuCount", b->cpu_count);
		cJSON_AddNumberToObject(j, "memoryMB", b->memory_mb);
		cJSON_AddNumberToObject(j, "diskSizeMB", b->disk_mb);
		cJSON_AddStringToObject(j, "envdVersion", "0.6.13");
		add_time(j, "createdAt", b->created_ms);
		add_time(j, "updatedAt", b->updated_ms);
		if (b->finished_ms)
			add_time(j, "finishedAt", b->finished_ms);
		cJSON_AddItemToArray(builds, j);
	}
	cJSON_AddItemToObject(o, "builds", builds);
	return o;
}
