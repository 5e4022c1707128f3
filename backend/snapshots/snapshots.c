/* The snapshots (snapshots.h): their list, records and layers. */
#define _GNU_SOURCE
#include "snapshots/snapshots.h"

#include "lib/clock.h"
#include "lib/random.h"
#include "lib/tree_remove.h"
#include "registry/registry.h"
#include "snapshots/snapshots_capture.h"
#include "store/store_layers.h"
#include "store/store_records.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <sys/stat.h>

#define RECORDS_KIND "snapshots"

struct snapshots {
	struct registry *reg;
	char *state_root;        /* records are kept there, or NULL */
	char *images;            /* <root>/snapshot-images: a snapshot's processes, by id */
	struct snapshot **items; /* oldest first */
	size_t count, cap;
	struct event *collect_ev; /* a zero timer: collect once the loop turns */
};

static void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->template_id);
	free(s->default_user);
	free(s->default_workdir);
	snapshots_capture_free_ids(s->layers, s->layer_count);
	free(s);
}

void snapshots_image_of(const struct snapshots *ss, const struct snapshot *s, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", ss->images ? ss->images : "", s->id);
	if (!ss->images || access(out, F_OK) != 0)
		out[0] = 0;
}

static int grow(struct snapshots *ss)
{
	if (ss->count < ss->cap)
		return 0;
	size_t cap = ss->cap ? ss->cap * 2 : 16;
	struct snapshot **items = realloc(ss->items, cap * sizeof *items);
	if (!items)
		return -1;
	ss->items = items;
	ss->cap = cap;
	return 0;
}

static cJSON *record_of(const struct snapshot *s)
{
	cJSON *r = cJSON_CreateObject(), *layers = cJSON_CreateArray();
	for (size_t i = 0; layers && i < s->layer_count; i++)
		cJSON_AddItemToArray(layers, cJSON_CreateString(s->layers[i]));
	if (!r || !layers || !cJSON_AddItemToObject(r, "layers", layers)) {
		cJSON_Delete(r);
		cJSON_Delete(layers);
		return NULL;
	}
	cJSON_AddStringToObject(r, "id", s->id);
	if (s->name)
		cJSON_AddStringToObject(r, "name", s->name);
	cJSON_AddStringToObject(r, "tag", s->tag);
	cJSON_AddStringToObject(r, "sandboxID", s->sandbox_id);
	cJSON_AddStringToObject(r, "templateID", s->template_id);
	if (s->default_user)
		cJSON_AddStringToObject(r, "defaultUser", s->default_user);
	if (s->default_workdir)
		cJSON_AddStringToObject(r, "defaultWorkdir", s->default_workdir);
	cJSON_AddNumberToObject(r, "cpuCount", s->cpu_count);
	cJSON_AddNumberToObject(r, "memoryMB", s->memory_mb);
	cJSON_AddNumberToObject(r, "diskSizeMB", s->disk_size_mb);
	cJSON_AddNumberToObject(r, "createdAt", (double)s->created_ms);
	return r;
}

static const char *str(const cJSON *o, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static int num(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsNumber(v) ? v->valueint : 0;
}

/* A snapshot from its record, or NULL for one that is not one. */
static struct snapshot *from_record(const char *id, const cJSON *r)
{
	const char *name = str(r, "name"), *tag = str(r, "tag"), *sandbox = str(r, "sandboxID");
	const char *tpl = str(r, "templateID");
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(r, "layers");
	if (strlen(id) != SNAPSHOT_ID_LEN || !tag || !snapshots_tag_valid(tag, strlen(tag)) ||
		(name && !snapshots_name_valid(name, strlen(name))) || !sandbox ||
		strlen(sandbox) > SNAPSHOT_ID_LEN || !tpl || !cJSON_IsArray(layers) ||
		cJSON_GetArraySize(layers) < 1)
		return NULL;
	struct snapshot *s = calloc(1, sizeof *s);
	size_t n = (size_t)cJSON_GetArraySize(layers);
	const char *user = str(r, "defaultUser"), *workdir = str(r, "defaultWorkdir");
	if (!s || !(s->layers = calloc(n, sizeof *s->layers)) || !(s->template_id = strdup(tpl)) ||
		(name && !(s->name = strdup(name))) || (user && !(s->default_user = strdup(user))) ||
		(workdir && !(s->default_workdir = strdup(workdir)))) {
		snapshot_free(s);
		return NULL;
	}
	const cJSON *l;
	cJSON_ArrayForEach(l, layers) {
		if (!cJSON_IsString(l) || !(s->layers[s->layer_count] = strdup(l->valuestring))) {
			snapshot_free(s);
			return NULL;
		}
		s->layer_count++;
	}
	strcpy(s->id, id);
	strcpy(s->tag, tag);
	strcpy(s->sandbox_id, sandbox);
	s->cpu_count = num(r, "cpuCount");
	s->memory_mb = num(r, "memoryMB");
	s->disk_size_mb = num(r, "diskSizeMB");
	const cJSON *created = cJSON_GetObjectItemCaseSensitive(r, "createdAt");
	s->created_ms = cJSON_IsNumber(created) ? (int64_t)created->valuedouble : 0;
	return s;
}

static void forget(struct snapshots *ss, size_t i)
{
	struct snapshot *s = ss->items[i];
	char image[4200];
	snapshots_image_of(ss, s, image, sizeof image);
	if (image[0])
		tree_remove(image);
	if (ss->state_root && store_records_delete(ss->state_root, RECORDS_KIND, s->id, STORE_DURABLE) != 0)
		fprintf(stderr, "snapshot %s: cannot remove its record: %s\n", s->id, strerror(errno));
	memmove(ss->items + i, ss->items + i + 1, (ss->count - i - 1) * sizeof *ss->items);
	ss->count--;
	snapshot_free(s);
}

/* The index of the snapshot named name:tag, or count. */
static size_t find_name(const struct snapshots *ss, const char *name, const char *tag)
{
	size_t i = 0;
	while (i < ss->count &&
		!(ss->items[i]->name && strcmp(ss->items[i]->name, name) == 0 &&
			strcmp(ss->items[i]->tag, tag) == 0))
		i++;
	return i;
}

static int load_one(void *ctx, const char *id, cJSON *record)
{
	struct snapshots *ss = ctx;
	struct snapshot *s = from_record(id, record);
	cJSON_Delete(record);
	if (!s || grow(ss) != 0) {
		fprintf(stderr, "e2b-local-backend: record of snapshot %s is not one; skipped\n", id);
		snapshot_free(s);
		return 0;
	}
	/* Kept in order of creation; a name:tag given twice (a crash between
	 * the new record and the old one's removal) keeps the newer. */
	size_t at = ss->count;
	while (at > 0 && ss->items[at - 1]->created_ms > s->created_ms)
		at--;
	memmove(ss->items + at + 1, ss->items + at, (ss->count - at) * sizeof *ss->items);
	ss->items[at] = s;
	ss->count++;
	return 0;
}

static void drop_duplicate_names(struct snapshots *ss)
{
	for (size_t i = ss->count; i-- > 0;) {
		const struct snapshot *s = ss->items[i];
		size_t j = s->name ? find_name(ss, s->name, s->tag) : ss->count;
		if (j < i)
			forget(ss, j);
	}
}

static void on_collect(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	snapshots_collect(arg);
}

/* Collects once the loop turns (a sandbox being removed is gone by then). */
static void on_sandbox_removing(void *ctx, struct sandbox *sb)
{
	struct snapshots *ss = ctx;
	struct timeval now = {0, 0};
	if (sb->layer_count > 0)
		evtimer_add(ss->collect_ev, &now);
}

/* Images no snapshot has (a crash between a dump and its record). */
static void drop_lost_images(struct snapshots *ss)
{
	DIR *d = ss->images ? opendir(ss->images) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		bool kept = e->d_name[0] == '.';
		for (size_t i = 0; !kept && i < ss->count; i++)
			kept = strcmp(ss->items[i]->id, e->d_name) == 0;
		if (!kept)
			tree_remove_at(dirfd(d), e->d_name);
	}
	if (d)
		closedir(d);
}

struct snapshots *snapshots_new(struct event_base *base, struct registry *reg, const char *state_root,
	bool persist)
{
	struct snapshots *ss = calloc(1, sizeof *ss);
	if (!ss)
		return NULL;
	ss->reg = reg;
	ss->collect_ev = evtimer_new(base, on_collect, ss);
	if (!ss->collect_ev || (persist && !(ss->state_root = strdup(state_root)))) {
		snapshots_free(ss);
		return NULL;
	}
	if (persist) {
		store_records_each(state_root, RECORDS_KIND, load_one, ss);
		drop_duplicate_names(ss);
	}
	size_t n = strlen(state_root) + sizeof "/snapshot-images";
	if ((ss->images = malloc(n))) {
		snprintf(ss->images, n, "%s/snapshot-images", state_root);
		if (mkdir(ss->images, 0700) != 0 && errno != EEXIST) {
			free(ss->images);
			ss->images = NULL;
		}
	}
	drop_lost_images(ss);
	struct registry_hooks hooks = {.ctx = ss, .removing = on_sandbox_removing};
	registry_add_hooks(reg, &hooks);
	return ss;
}

void snapshots_free(struct snapshots *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->count; i++)
		snapshot_free(ss->items[i]);
	if (ss->collect_ev)
		event_free(ss->collect_ev);
	free(ss->items);
	free(ss->state_root);
	free(ss->images);
	free(ss);
}

size_t snapshots_count(const struct snapshots *ss)
{
	return ss->count;
}

const struct snapshot *snapshots_at(const struct snapshots *ss, size_t i)
{
	return i < ss->count ? ss->items[i] : NULL;
}

void snapshots_id_of(const struct snapshot *s, char *out)
{
	snapshots_id_text(s->name, s->id, s->tag, out);
}

bool snapshots_matches(const struct snapshot *s, const struct snapshot_ref *ref, bool any_tag)
{
	bool named = s->name ? strcmp(s->name, ref->name) == 0 : strcmp(s->id, ref->name) == 0;
	return named && ((any_tag && !ref->has_tag) || strcmp(s->tag, ref->tag) == 0);
}

const struct snapshot *snapshots_resolve(const struct snapshots *ss, const char *text)
{
	struct snapshot_ref ref;
	if (snapshots_ref_parse(text, &ref, NULL) != 0)
		return NULL;
	for (size_t i = ss->count; i-- > 0;)
		if (snapshots_matches(ss->items[i], &ref, false))
			return ss->items[i];
	return NULL;
}

int snapshots_roots(const struct snapshot *s, const char **roots, size_t max)
{
	if (s->layer_count > max)
		return -1;
	for (size_t i = 0; i < s->layer_count; i++) {
		const struct store_layer *l = store_layer_find(s->layers[i]);
		if (!l)
			return -1;
		roots[i] = l->root;
	}
	return (int)s->layer_count;
}

size_t snapshots_delete(struct snapshots *ss, const struct snapshot_ref *ref)
{
	size_t n = 0;
	for (size_t i = ss->count; i-- > 0;) {
		if (!snapshots_matches(ss->items[i], ref, true))
			continue;
		forget(ss, i);
		n++;
	}
	if (n > 0)
		snapshots_collect(ss);
	return n;
}

const struct snapshot *snapshots_add(struct snapshots *ss, const struct sandbox *sb, const char *name,
	const char *tag, const char *const *layer_ids, size_t layer_count, const char *image)
{
	struct snapshot *s = calloc(1, sizeof *s);
	if (!s || grow(ss) != 0 || random_lower_alnum(s->id, SNAPSHOT_ID_LEN) != 0 ||
		!(s->template_id = strdup(sb->template_id)) || (name && !(s->name = strdup(name))) ||
		(sb->default_user && !(s->default_user = strdup(sb->default_user))) ||
		(sb->default_workdir && !(s->default_workdir = strdup(sb->default_workdir))) ||
		!(s->layers = calloc(layer_count, sizeof *s->layers))) {
		snapshot_free(s);
		return NULL;
	}
	for (; s->layer_count < layer_count; s->layer_count++) {
		if (!(s->layers[s->layer_count] = strdup(layer_ids[s->layer_count]))) {
			snapshot_free(s);
			return NULL;
		}
	}
	snprintf(s->tag, sizeof s->tag, "%s", tag);
	strcpy(s->sandbox_id, sb->id);
	s->cpu_count = sb->cpu_count;
	s->memory_mb = sb->memory_mb;
	s->disk_size_mb = sb->disk_size_mb;
	s->created_ms = clock_now_ms();
	cJSON *r = ss->state_root ? record_of(s) : NULL;
	int rc = !ss->state_root ? 0
		: r              ? store_records_write(ss->state_root, RECORDS_KIND, s->id, r, STORE_DURABLE)
				 : -1;
	cJSON_Delete(r);
	if (rc != 0) {
		fprintf(stderr, "snapshot of %s: cannot write its record: %s\n", sb->id, strerror(errno));
		snapshot_free(s);
		return NULL;
	}
	char kept[4200];
	snprintf(kept, sizeof kept, "%s/%s", ss->images ? ss->images : "", s->id);
	if (image && (!ss->images || rename(image, kept) != 0))
		fprintf(stderr, "snapshot %s: its processes are not kept: %s\n", s->id, strerror(errno));
	/* The name now stands for this one: the one it stood for goes. */
	size_t old = name ? find_name(ss, name, s->tag) : ss->count;
	ss->items[ss->count++] = s;
	if (old < ss->count - 1) {
		forget(ss, old);
		snapshots_collect(ss);
	}
	return s;
}

struct lookup {
	const char *id;
	bool found;
};

static void match(void *set, const char *id)
{
	struct lookup *q = set;
	q->found = q->found || strcmp(q->id, id) == 0;
}

/* Whether any snapshot, capture in progress or sandbox stands on layer l. */
static bool in_use(const struct snapshots *ss, const struct store_layer *l)
{
	struct lookup q = {.id = l->id};
	snapshots_capture_keep_layers(match, &q);
	if (q.found)
		return true;
	for (size_t i = 0; i < ss->count; i++)
		for (size_t k = 0; k < ss->items[i]->layer_count; k++)
			if (strcmp(ss->items[i]->layers[k], l->id) == 0)
				return true;
	for (size_t i = 0; i < registry_count(ss->reg); i++) {
		const struct sandbox *sb = registry_at(ss->reg, i);
		for (size_t k = 0; k < sb->layer_count; k++)
			if (strcmp(sb->layers[k], l->root) == 0)
				return true;
	}
	return false;
}

void snapshots_collect(struct snapshots *ss)
{
	/* Only what this folder sealed: templates' layers are templates'. */
	for (size_t i = store_layers_count(); i-- > 0;) {
		const struct store_layer *l = store_layers_at(i);
		if (!l || (strcmp(l->origin, "snapshot") != 0 && strcmp(l->origin, "fork") != 0) ||
			in_use(ss, l))
			continue;
		char id[sizeof l->id];
		snprintf(id, sizeof id, "%s", l->id);
		if (store_layer_remove(id, NULL, NULL) != 0)
			fprintf(stderr, "e2b-local-backend: cannot remove layer %s: %s\n", id,
				strerror(errno));
	}
}

void snapshots_keep_layers(void *ss, void (*keep)(void *set, const char *id), void *set)
{
	snapshots_capture_keep_layers(keep, set);
	for (size_t i = 0; ss && i < snapshots_count(ss); i++) {
		const struct snapshot *s = snapshots_at(ss, i);
		for (size_t k = 0; k < s->layer_count; k++)
			keep(set, s->layers[k]);
	}
}
