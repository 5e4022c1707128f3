/* The layers of the store (store_layers.h): the list in memory, made from
 * the layer.json files at start and kept in step with every seal, import
 * and removal. */
#define _GNU_SOURCE
#include "store/store_layers.h"

#include "lib/clock.h"
#include "lib/err.h"
#include "lib/random.h"
#include "lib/text.h"
#include "lib/tree_remove.h"
#include "store/store_helper.h"
#include "store/store_shift.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_PREFIX ".tmp-"

/* A seal in progress (its id is taken until it ends). */
struct seal_job {
	struct seal_job *next;
	char id[STORE_NAME_MAX + 1];
	char parent[STORE_NAME_MAX + 1];
	char origin[64];
	char *upper;
	uid_t id_base;
	unsigned long id_count;
	char *tmp; /* layers/.tmp-<random>, where the helper builds it */
	store_layer_done done;
	void *ctx;
};

/* A removal in progress. */
struct remove_job {
	char *tmp;
	store_layer_done done;
	void *ctx;
};

static struct {
	struct event_base *base;
	char *dir; /* <state>/layers */
	struct store_layer **items;
	size_t count, cap;
	struct seal_job *sealing;
} g;

static void layer_free(struct store_layer *l)
{
	if (!l)
		return;
	free(l->root);
	free(l->external);
	free(l);
}

static int add(struct store_layer *l)
{
	if (g.count == g.cap) {
		size_t cap = g.cap ? g.cap * 2 : 16;
		struct store_layer **items = realloc(g.items, cap * sizeof *items);
		if (!items)
			return -1;
		g.items = items;
		g.cap = cap;
	}
	g.items[g.count++] = l;
	return 0;
}

const struct store_layer *store_layer_find(const char *id)
{
	for (size_t i = 0; id && i < g.count; i++)
		if (strcmp(g.items[i]->id, id) == 0)
			return g.items[i];
	return NULL;
}

size_t store_layers_count(void)
{
	return g.count;
}

const struct store_layer *store_layers_at(size_t i)
{
	return i < g.count ? g.items[i] : NULL;
}

static const char *string_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* layers/<id>/layer.json, or NULL (errno) when missing or not one of id's. */
static struct store_layer *layer_load(const char *id)
{
	char *path = text_printf("%s/%s/layer.json", g.dir, id);
	cJSON *json = path ? store_json_read(path) : NULL;
	free(path);
	struct store_layer *l = json ? calloc(1, sizeof *l) : NULL;
	const char *got = json ? string_of(json, "id") : NULL;
	const char *parent = json ? string_of(json, "parent") : NULL;
	const char *origin = json ? string_of(json, "origin") : NULL;
	const char *created = json ? string_of(json, "created") : NULL;
	const char *external = json ? string_of(json, "external") : NULL;
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(json, "size");
	bool ok = l && got && strcmp(got, id) == 0 && store_name_valid(id) && origin &&
		(!parent || store_name_valid(parent)) && strlen(origin) < sizeof l->origin && created &&
		clock_parse_rfc3339(created, &l->created_ms) == 0 && cJSON_IsNumber(size) &&
		size->valuedouble >= 0;
	if (ok) {
		snprintf(l->id, sizeof l->id, "%s", id);
		snprintf(l->parent, sizeof l->parent, "%s", parent ? parent : "");
		snprintf(l->origin, sizeof l->origin, "%s", origin);
		l->size = (uint64_t)size->valuedouble;
		l->root = text_printf("%s/%s/root", g.dir, id);
		l->external = external ? strdup(external) : NULL;
		ok = l->root && (!external || l->external);
	}
	cJSON_Delete(json);
	if (!ok) {
		layer_free(l);
		errno = EINVAL;
		return NULL;
	}
	return l;
}

/* layer.json for a layer being made in tmp. */
static int write_layer_json(const char *tmp, const char *id, const char *parent, const char *origin,
	const char *external, uint64_t size)
{
	char created[CLOCK_RFC3339_LEN];
	clock_format_rfc3339(clock_now_ms(), created);
	cJSON *o = cJSON_CreateObject();
	char *path = text_printf("%s/layer.json", tmp);
	int rc = -1;
	if (o && path && cJSON_AddStringToObject(o, "id", id) &&
		(parent && parent[0] ? cJSON_AddStringToObject(o, "parent", parent) != NULL
				     : cJSON_AddNullToObject(o, "parent") != NULL) &&
		cJSON_AddStringToObject(o, "origin", origin) &&
		cJSON_AddNumberToObject(o, "size", (double)size) &&
		cJSON_AddStringToObject(o, "created", created) &&
		(!external || cJSON_AddStringToObject(o, "external", external)))
		rc = store_json_write(path, o, STORE_DURABLE);
	else
		errno = ENOMEM;
	int e = errno;
	cJSON_Delete(o);
	free(path);
	errno = e;
	return rc;
}

/* The last step of making a layer: tmp becomes layers/<id>, durably. */
static int publish(const char *tmp, const char *id)
{
	char *final = text_printf("%s/%s", g.dir, id);
	int rc = final ? renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) : -1;
	int e = errno;
	free(final);
	if (rc == 0) {
		int fd = open(g.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
		e = errno;
		if (fd >= 0)
			close(fd);
	}
	errno = e;
	return rc;
}

static char *new_tmp_path(void)
{
	char rand[17];
	return random_hex(rand, 16) == 0 ? text_printf("%s/" TMP_PREFIX "%s", g.dir, rand) : NULL;
}

/* --- layers made by others: scratch directories, publishing, adopting -------- */

char *store_scratch_new(void)
{
	char *tmp = g.dir ? new_tmp_path() : NULL;
	if (tmp && mkdir(tmp, 0700) != 0) {
		free(tmp);
		return NULL;
	}
	return tmp;
}

char *store_layer_path(const char *id)
{
	return g.dir && store_name_valid(id) ? text_printf("%s/%s", g.dir, id) : NULL;
}

int store_layer_publish(const char *dir, const char *id, const char *parent, const char *origin,
	uint64_t size, struct err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd >= 0 && syncfs(fd) == 0 && write_layer_json(dir, id, parent, origin, NULL, size) == 0
		? publish(dir, id)
		: -1;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (rc != 0 && (e == EEXIST || e == ENOTEMPTY)) {
		/* Made meanwhile by another job: the same id, the same tree. */
		tree_remove(dir);
		return 0;
	}
	if (rc != 0)
		err_set(err, e, "cannot write layer %s: %s", id, strerror(e));
	return rc;
}

const struct store_layer *store_layer_adopt(const char *id)
{
	const struct store_layer *had = store_layer_find(id);
	if (had || !g.dir || !store_name_valid(id))
		return had;
	struct store_layer *l = layer_load(id);
	if (l && add(l) == 0)
		return l;
	layer_free(l);
	return NULL;
}

/* --- removing the .tmp-* of an earlier run ------------------------------------ */

static int remove_paths(void *arg, struct err *err)
{
	int rc = 0;
	for (char **p = arg; *p; p++) {
		if (tree_remove(*p) != 0) {
			err_set(err, 0, "cannot delete %s completely", *p);
			rc = -1;
		}
	}
	return rc;
}

static void paths_removed(void *ctx, const struct err *err)
{
	if (err)
		fprintf(stderr, "e2b-local-backend: layers: %s\n", err->msg);
	for (char **p = ctx; *p; p++)
		free(*p);
	free(ctx);
}

int store_layers_init(struct event_base *base, const char *state_root)
{
	g.base = base;
	g.dir = text_printf("%s/layers", state_root);
	DIR *d = g.dir && (mkdir(g.dir, 0700) == 0 || errno == EEXIST) ? opendir(g.dir) : NULL;
	if (!d) {
		fprintf(stderr, "e2b-local-backend: cannot open %s/layers: %s\n", state_root,
			strerror(errno));
		return -1;
	}
	char **leftovers = calloc(1, sizeof *leftovers);
	size_t nleft = 0;
	struct dirent *e;
	while (leftovers && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
			char **more = realloc(leftovers, (nleft + 2) * sizeof *more);
			char *path = more ? text_printf("%s/%s", g.dir, e->d_name) : NULL;
			if (more)
				leftovers = more;
			if (path) {
				leftovers[nleft++] = path;
				leftovers[nleft] = NULL;
			}
			continue;
		}
		if (e->d_name[0] == '.')
			continue;
		struct store_layer *l = layer_load(e->d_name);
		if (!l || add(l) != 0) {
			fprintf(stderr, "e2b-local-backend: layers/%s has no valid layer.json; ignored\n",
				e->d_name);
			layer_free(l);
		}
	}
	closedir(d);
	if (nleft > 0) {
		fprintf(stderr, "e2b-local-backend: removing %zu half-made layer%s of an earlier run\n",
			nleft, nleft == 1 ? "" : "s");
		if (store_helper_run(base, "e2b-layer-clean", remove_paths, leftovers, paths_removed,
			    leftovers) == 0)
			leftovers = NULL;
	}
	if (leftovers)
		paths_removed(leftovers, NULL);
	return 0;
}

int store_scratch_remove(char *path)
{
	char **paths = calloc(2, sizeof *paths);
	if (!paths) {
		free(path);
		return -1;
	}
	paths[0] = path;
	if (store_helper_run(g.base, "e2b-layer-clean", remove_paths, paths, paths_removed, paths) != 0) {
		struct err err;
		paths_removed(paths, remove_paths(paths, &err) == 0 ? NULL : &err);
	}
	return 0;
}

void store_layers_shutdown(void)
{
	store_helper_wait_all();
	for (size_t i = 0; i < g.count; i++)
		layer_free(g.items[i]);
	free(g.items);
	free(g.dir);
	memset(&g, 0, sizeof g);
}

/* --- external layers ------------------------------------------------------------ */

int store_layer_add_external(const char *id, const char *dir, const char *origin)
{
	char abs[PATH_MAX];
	struct stat st;
	if (!g.dir || !store_name_valid(id)) {
		errno = EINVAL;
		return -1;
	}
	if (!realpath(dir, abs) || stat(abs, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	const struct store_layer *had = store_layer_find(id);
	if (had) {
		if (had->external && strcmp(had->external, abs) == 0)
			return 0;
		errno = EEXIST;
		return -1;
	}
	char *tmp = new_tmp_path();
	char *link = tmp ? text_printf("%s/root", tmp) : NULL;
	int rc = link && mkdir(tmp, 0700) == 0 && symlink(abs, link) == 0 &&
			write_layer_json(tmp, id, NULL, origin ? origin : "external", abs, 0) == 0 &&
			publish(tmp, id) == 0
		? 0
		: -1;
	int e = errno == ENOTEMPTY ? EEXIST : errno;
	if (rc != 0 && tmp)
		tree_remove(tmp);
	free(link);
	free(tmp);
	struct store_layer *l = rc == 0 ? layer_load(id) : NULL;
	if (rc == 0 && (!l || add(l) != 0)) {
		layer_free(l);
		e = ENOMEM;
		rc = -1;
	}
	errno = e;
	return rc;
}

/* --- sealing ---------------------------------------------------------------------- */

/* In the helper. */
static int seal_run(void *arg, struct err *err)
{
	struct seal_job *job = arg;
	char root[PATH_MAX];
	uint64_t bytes = 0;
	snprintf(root, sizeof root, "%s/root", job->tmp);
	int rc = mkdir(job->tmp, 0700);
	if (rc != 0)
		err_set(err, errno, "cannot make %s: %s", job->tmp, strerror(errno));
	if (rc == 0)
		rc = store_shift_copy(job->upper, root, job->id_base, job->id_count, &bytes, err);
	/* One syncfs, not an fsync per file: the tree is on disk before
	 * layer.json says it is complete. */
	int fd = rc == 0 ? open(job->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (rc == 0 &&
		(fd < 0 || syncfs(fd) != 0 ||
			write_layer_json(job->tmp, job->id, job->parent, job->origin, NULL, bytes) != 0 ||
			publish(job->tmp, job->id) != 0)) {
		err_set(err, errno, "cannot write layer %s: %s", job->id, strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		tree_remove(job->tmp);
	return rc;
}

static void seal_job_free(struct seal_job *job)
{
	for (struct seal_job **pp = &g.sealing; *pp; pp = &(*pp)->next) {
		if (*pp == job) {
			*pp = job->next;
			break;
		}
	}
	free(job->upper);
	free(job->tmp);
	free(job);
}

static void seal_done(void *ctx, const struct err *err)
{
	struct seal_job *job = ctx;
	struct err unread;
	struct store_layer *l = NULL;
	if (!err) {
		l = layer_load(job->id);
		if (!l || add(l) != 0) {
			layer_free(l);
			l = NULL;
			err = &unread;
			err_set(&unread, 0, "layer %s was made but cannot be read back", job->id);
		}
	}
	store_layer_done done = job->done;
	void *done_ctx = job->ctx;
	seal_job_free(job);
	done(done_ctx, l, err);
}

static bool id_in_use(const char *id)
{
	for (struct seal_job *j = g.sealing; j; j = j->next)
		if (strcmp(j->id, id) == 0)
			return true;
	return store_layer_find(id) != NULL;
}

int store_layer_seal(const struct store_seal_spec *spec, store_layer_done done, void *ctx, char *id_out)
{
	const char *origin = spec->origin ? spec->origin : "sealed";
	if (!g.dir || !spec->upper || !done || spec->id_count == 0 ||
		(spec->id && !store_name_valid(spec->id)) ||
		(spec->parent && !store_name_valid(spec->parent)) || strlen(origin) >= 64) {
		errno = EINVAL;
		return -1;
	}
	struct seal_job *job = calloc(1, sizeof *job);
	if (!job)
		return -1;
	if (spec->id)
		snprintf(job->id, sizeof job->id, "%s", spec->id);
	else if (random_hex(job->id, 32) != 0) {
		free(job);
		return -1;
	}
	if (id_in_use(job->id)) {
		free(job);
		errno = EEXIST;
		return -1;
	}
	snprintf(job->parent, sizeof job->parent, "%s", spec->parent ? spec->parent : "");
	snprintf(job->origin, sizeof job->origin, "%s", origin);
	job->upper = strdup(spec->upper);
	job->tmp = new_tmp_path();
	job->id_base = spec->id_base;
	job->id_count = spec->id_count;
	job->done = done;
	job->ctx = ctx;
	job->next = g.sealing;
	g.sealing = job;
	if (!job->upper || !job->tmp ||
		store_helper_run(g.base, "e2b-layer-seal", seal_run, job, seal_done, job) != 0) {
		int e = errno;
		seal_job_free(job);
		errno = e;
		return -1;
	}
	if (id_out)
		snprintf(id_out, STORE_NAME_MAX + 1, "%s", job->id);
	return 0;
}

/* --- removing ------------------------------------------------------------------- */

static int remove_run(void *arg, struct err *err)
{
	struct remove_job *job = arg;
	if (tree_remove(job->tmp) == 0)
		return 0;
	err_set(err, 0, "cannot delete %s completely", job->tmp);
	return -1;
}

static void remove_done(void *ctx, const struct err *err)
{
	struct remove_job *job = ctx;
	if (err)
		fprintf(stderr, "e2b-local-backend: layers: %s\n", err->msg);
	if (job->done)
		job->done(job->ctx, NULL, err);
	free(job->tmp);
	free(job);
}

int store_layer_remove(const char *id, store_layer_done done, void *ctx)
{
	size_t i = 0;
	while (i < g.count && strcmp(g.items[i]->id, id) != 0)
		i++;
	if (i == g.count) {
		errno = ENOENT;
		return -1;
	}
	struct remove_job *job = calloc(1, sizeof *job);
	char *dir = text_printf("%s/%s", g.dir, id);
	if (job)
		job->tmp = new_tmp_path();
	/* Out of layers/ at once (a crash from here on leaves a .tmp-*). */
	if (!job || !dir || !job->tmp || rename(dir, job->tmp) != 0) {
		int e = errno;
		free(dir);
		if (job)
			free(job->tmp);
		free(job);
		errno = e;
		return -1;
	}
	free(dir);
	layer_free(g.items[i]);
	g.items[i] = g.items[--g.count];
	job->done = done;
	job->ctx = ctx;
	if (store_helper_run(g.base, "e2b-layer-rm", remove_run, job, remove_done, job) != 0) {
		/* No helper: delete it here, blocking, rather than leave it. */
		struct err err;
		remove_done(job, remove_run(job, &err) == 0 ? NULL : &err);
	}
	return 0;
}
