/* Templates' records (templates_records.h). */
#include "templates/templates_records.h"

#include "store/store_layers.h"
#include "store/store_records.h"
#include "templates/templates.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIND "templates"

static void add_string(cJSON *o, const char *name, const char *value)
{
	if (value)
		cJSON_AddStringToObject(o, name, value);
}

static cJSON *config_json(const struct template_config *c)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	add_string(o, "base", c->base);
	cJSON_AddItemToObject(o, "envs", cJSON_Duplicate(c->envs, true));
	add_string(o, "workdir", c->workdir);
	add_string(o, "user", c->user);
	add_string(o, "startCmd", c->start_cmd);
	add_string(o, "readyCmd", c->ready_cmd);
	cJSON_AddItemToObject(o, "layers", cJSON_Duplicate(c->layers, true));
	return o;
}

static cJSON *build_json(const struct template_build *b)
{
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "buildID", b->id);
	cJSON_AddNumberToObject(o, "cpuCount", b->cpu_count);
	cJSON_AddNumberToObject(o, "memoryMB", b->memory_mb);
	cJSON_AddNumberToObject(o, "diskSizeMB", b->disk_mb);
	cJSON_AddNumberToObject(o, "createdMs", (double)b->created_ms);
	cJSON_AddNumberToObject(o, "finishedMs", (double)b->finished_ms);
	cJSON_AddItemToObject(o, "config", config_json(&b->config));
	return o;
}

int templates_records_save(const char *state_root, const struct template *tpl)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *builds = cJSON_CreateArray();
	if (!o || !builds) {
		cJSON_Delete(o);
		cJSON_Delete(builds);
		errno = ENOMEM;
		return -1;
	}
	cJSON_AddStringToObject(o, "templateID", tpl->id);
	cJSON_AddStringToObject(o, "name", tpl->name);
	cJSON_AddItemToObject(o, "tags", cJSON_Duplicate(tpl->tags, true));
	cJSON_AddNumberToObject(o, "createdMs", (double)tpl->created_ms);
	cJSON_AddNumberToObject(o, "updatedMs", (double)tpl->updated_ms);
	cJSON_AddNumberToObject(o, "lastSpawnedMs", (double)tpl->last_spawned_ms);
	cJSON_AddNumberToObject(o, "spawnCount", (double)tpl->spawn_count);
	for (const struct template_build *b = tpl->builds; b; b = b->next)
		if (b->status == BUILD_READY)
			cJSON_AddItemToArray(builds, build_json(b));
	cJSON_AddItemToObject(o, "builds", builds);
	int rc = store_records_write(state_root, KIND, tpl->id, o, STORE_DURABLE);
	int e = errno;
	cJSON_Delete(o);
	errno = e;
	return rc;
}

int templates_records_delete(const char *state_root, const char *template_id)
{
	return store_records_delete(state_root, KIND, template_id, STORE_DURABLE);
}

static const char *str(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static double num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static int dup_opt(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -1 : 0;
}

/* A ready build from its record, or NULL (why on stderr). */
static struct template_build *build_from(const struct template *tpl, const cJSON *j)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "config");
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(c, "layers");
	const cJSON *envs = cJSON_GetObjectItemCaseSensitive(c, "envs");
	const char *id = str(j, "buildID");
	if (!id || strlen(id) != TEMPLATES_BUILD_ID_LEN || !cJSON_IsArray(layers) ||
		cJSON_GetArraySize(layers) == 0 || !cJSON_IsObject(envs))
		return NULL;
	const cJSON *l;
	cJSON_ArrayForEach(l, layers) {
		if (!store_layer_find(cJSON_GetStringValue(l))) {
			fprintf(stderr,
				"e2b-local-backend: template %s: build %s stands on layer %s, which "
				"is not in the store; left out\n",
				tpl->id, id, cJSON_IsString(l) ? l->valuestring : "?");
			return NULL;
		}
	}
	struct template_build *b = build_new(tpl->id, (int)num(j, "cpuCount"), (int)num(j, "memoryMB"),
		(int)num(j, "diskSizeMB"));
	if (!b)
		return NULL;
	snprintf(b->id, sizeof b->id, "%s", id);
	b->status = BUILD_READY;
	b->created_ms = (int64_t)num(j, "createdMs");
	b->finished_ms = b->updated_ms = (int64_t)num(j, "finishedMs");
	struct template_config *cfg = &b->config;
	cJSON_Delete(cfg->envs);
	cfg->envs = cJSON_Duplicate(envs, true);
	cfg->layers = cJSON_Duplicate(layers, true);
	if (!cfg->envs || !cfg->layers || dup_opt(&cfg->base, str(c, "base")) ||
		dup_opt(&cfg->workdir, str(c, "workdir")) || dup_opt(&cfg->user, str(c, "user")) ||
		dup_opt(&cfg->start_cmd, str(c, "startCmd")) ||
		dup_opt(&cfg->ready_cmd, str(c, "readyCmd"))) {
		build_free(b);
		return NULL;
	}
	return b;
}

static int load_one(void *ctx, const char *id, cJSON *record)
{
	struct templates *catalog = ctx;
	const char *name = str(record, "name");
	const cJSON *tags = cJSON_GetObjectItemCaseSensitive(record, "tags");
	struct template *tpl = NULL;
	if (strlen(id) == TEMPLATES_ID_LEN && name && templates_valid_name(name, TEMPLATES_NAME_MAX) &&
		cJSON_IsObject(tags) && !templates_find(catalog, id) && !templates_find(catalog, name))
		tpl = templates_add(catalog, name);
	if (!tpl) {
		fprintf(stderr, "e2b-local-backend: records/templates/%s.json is not a template; ignored\n",
			id);
		cJSON_Delete(record);
		return 0;
	}
	snprintf(tpl->id, sizeof tpl->id, "%s", id);
	cJSON_Delete(tpl->tags);
	tpl->tags = cJSON_Duplicate(tags, true);
	tpl->created_ms = (int64_t)num(record, "createdMs");
	tpl->updated_ms = (int64_t)num(record, "updatedMs");
	tpl->last_spawned_ms = (int64_t)num(record, "lastSpawnedMs");
	tpl->spawn_count = (int64_t)num(record, "spawnCount");
	struct template_build **tail = &tpl->builds;
	const cJSON *j;
	cJSON_ArrayForEach(j, cJSON_GetObjectItemCaseSensitive(record, "builds")) {
		struct template_build *b = build_from(tpl, j);
		if (b) {
			*tail = b;
			tail = &b->next;
		}
	}
	cJSON_Delete(record);
	return 0;
}

int templates_records_load(const char *state_root, struct templates *catalog)
{
	return store_records_each(state_root, KIND, load_one, catalog);
}

void templates_records_build_ready(const char *state_root, struct templates *catalog,
	struct template_build *b, struct template_config *cfg)
{
	build_config_clear(&b->config);
	b->config = *cfg;
	memset(cfg, 0, sizeof *cfg);
	struct template *tpl = templates_tag_build(catalog, b->template_id, b->tags, b->id);
	build_log(b, "info", "finalize", "Build finished: template %s, build %s", b->template_id, b->id);
	build_finish(b, NULL, NULL);
	if (tpl && templates_records_save(state_root, tpl) != 0)
		fprintf(stderr, "e2b-local-backend: cannot write the record of template %s: %s\n", tpl->id,
			strerror(errno));
}
