/* The volumes (volumes.h): their list, data and tokens. */
#define _GNU_SOURCE
#include "volumes/volumes.h"

#include "lib/clock.h"
#include "lib/crashpoint.h"
#include "lib/hmac.h"
#include "lib/random.h"
#include "lib/text.h"
#include "lib/tree_remove.h"
#include "registry/registry.h"
#include "runtime/runtime_disk_image.h"
#include "runtime/runtime_volumes.h"
#include "store/store_records.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define CANONICAL_USER 1000 /* "user", E2B's default account: owns a new volume's root */

#define RECORDS_KIND "volumes"

struct volumes {
	char *dir;        /* <state>/volumes */
	char *state_root; /* records are kept there, or NULL */
	struct registry *reg;
	char *token_key;
	bool images;
	struct volume **items;
	size_t count, cap;
};

static void volume_free(struct volume *v)
{
	if (!v)
		return;
	free(v->name);
	free(v->data_dir);
	free(v);
}

static int grow(struct volumes *vs)
{
	if (vs->count < vs->cap)
		return 0;
	size_t cap = vs->cap ? vs->cap * 2 : 8;
	struct volume **items = realloc(vs->items, cap * sizeof *items);
	if (!items)
		return -1;
	vs->items = items;
	vs->cap = cap;
	return 0;
}

/* One volume of a record: its image mounted again. */
static int restore_one(void *ctx, const char *id, cJSON *record)
{
	struct volumes *vs = ctx;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(record, "name"));
	const cJSON *size = cJSON_GetObjectItemCaseSensitive(record, "sizeMB");
	const cJSON *created = cJSON_GetObjectItemCaseSensitive(record, "createdAt");
	struct volume *v = calloc(1, sizeof *v);
	char *img = text_printf("%s/%s/disk.img", vs->dir, id);
	int rc = -1;
	if (v && img && name && volumes_name_valid(name) && cJSON_IsNumber(size) &&
		strlen(id) == VOLUME_ID_LEN && grow(vs) == 0 && (v->name = strdup(name)) &&
		(v->data_dir = runtime_volumes_data_dir(id))) {
		strcpy(v->id, id);
		v->size_mb = size->valueint;
		v->created_ms = cJSON_IsNumber(created) ? (int64_t)created->valuedouble : 0;
		v->loop = -1;
		if (vs->images) {
			struct runtime_disk disk = {.loop = -1};
			rc = runtime_disk_image_mount_existing(img, v->data_dir, &disk);
			v->loop = disk.loop;
			v->mounted = disk.mounted;
		} else {
			struct stat st;
			rc = stat(v->data_dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
		}
	}
	if (rc != 0)
		fprintf(stderr, "e2b-local-backend: cannot bring back volume %s: %s\n", id,
			v && v->data_dir ? strerror(errno) : "its record is not one");
	else
		vs->items[vs->count++] = v;
	if (rc != 0)
		volume_free(v);
	free(img);
	cJSON_Delete(record);
	return 0;
}

/* Data in <state>/volumes without a volume: a create or delete that a
 * crash cut short. The master images (ext4-<MiB>.img) stay. */
static void remove_orphans(struct volumes *vs)
{
	DIR *d = opendir(vs->dir);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, "ext4-", 5) == 0 || volumes_find(vs, e->d_name))
			continue;
		/* A volume with a record that could not be brought back (its image
		 * busy, say) keeps its data for a later start. */
		cJSON *record = store_name_valid(e->d_name)
			? store_records_read(vs->state_root, RECORDS_KIND, e->d_name)
			: NULL;
		if (record || (errno != ENOENT && store_name_valid(e->d_name))) {
			cJSON_Delete(record);
			continue;
		}
		char *path = text_printf("%s/%s", vs->dir, e->d_name);
		if (path) {
			fprintf(stderr, "e2b-local-backend: removing %s (a volume without a record)\n", path);
			tree_remove(path);
		}
		free(path);
	}
	if (d)
		closedir(d);
}

struct volumes *volumes_open(const char *state_root, struct registry *reg, const char *token_key, bool images,
	bool persist)
{
	struct volumes *vs = calloc(1, sizeof *vs);
	if (!vs)
		return NULL;
	vs->reg = reg;
	vs->images = images;
	vs->dir = text_printf("%s/volumes", state_root);
	vs->token_key = strdup(token_key);
	if (!vs->dir || !vs->token_key || (mkdir(vs->dir, 0700) != 0 && errno != EEXIST)) {
		fprintf(stderr, "e2b-local-backend: cannot create the volumes directory: %s\n",
			strerror(errno));
		volumes_close(vs);
		return NULL;
	}
	if (persist) {
		vs->state_root = strdup(state_root);
		if (!vs->state_root) {
			volumes_close(vs);
			return NULL;
		}
		store_records_each(state_root, RECORDS_KIND, restore_one, vs);
		remove_orphans(vs);
	}
	return vs;
}

/* Unmounts a volume's image; what was written is kept (a plain unmount
 * writes it out), unlike a sandbox disk's. */
static void unmount_volume(struct volume *v)
{
	if (v->mounted && umount2(v->data_dir, 0) != 0)
		umount2(v->data_dir, MNT_DETACH);
	v->mounted = false;
}

void volumes_close(struct volumes *vs)
{
	if (!vs)
		return;
	for (size_t i = 0; i < vs->count; i++) {
		unmount_volume(vs->items[i]);
		volume_free(vs->items[i]);
	}
	free(vs->items);
	free(vs->dir);
	free(vs->state_root);
	free(vs->token_key);
	free(vs);
}

bool volumes_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

const struct volume *volumes_find(const struct volumes *vs, const char *id)
{
	for (size_t i = 0; i < vs->count; i++)
		if (strcmp(vs->items[i]->id, id) == 0)
			return vs->items[i];
	return NULL;
}

const struct volume *volumes_find_name(const struct volumes *vs, const char *name)
{
	for (size_t i = 0; i < vs->count; i++)
		if (strcmp(vs->items[i]->name, name) == 0)
			return vs->items[i];
	return NULL;
}

size_t volumes_count(const struct volumes *vs)
{
	return vs->count;
}

const struct volume *volumes_at(const struct volumes *vs, size_t i)
{
	return i < vs->count ? vs->items[i] : NULL;
}

/* Makes <dir>/<id>/ with its data: the image formatted and mounted at data/
 * (or a plain data/), its root the default user's, without lost+found. */
static int make_data(struct volumes *vs, struct volume *v)
{
	char *home = text_printf("%s/%s", vs->dir, v->id);
	char *img = text_printf("%s/%s/disk.img", vs->dir, v->id);
	int rc = -1;
	if (home && img && mkdir(home, 0700) == 0) {
		if (!vs->images) {
			rc = mkdir(v->data_dir, 0755);
		} else {
			/* Master images of each size are kept beside the volumes. */
			struct runtime_disk disk = {.loop = -1};
			rc = runtime_disk_image_prepare(vs->dir, v->size_mb, img, v->data_dir, &disk, false);
			v->loop = disk.loop;
			v->mounted = disk.mounted;
			if (rc == 0) {
				char *lf = text_printf("%s/lost+found", v->data_dir);
				if (lf)
					rmdir(lf);
				free(lf);
			}
		}
		if (rc == 0)
			rc = chown(v->data_dir, CANONICAL_USER, CANONICAL_USER);
	}
	free(home);
	free(img);
	return rc;
}

/* Its record, once its data is complete (with persistence). */
static int save(struct volumes *vs, const struct volume *v)
{
	if (!vs->state_root)
		return 0;
	cJSON *r = cJSON_CreateObject();
	int rc = r && cJSON_AddStringToObject(r, "volumeID", v->id) &&
			cJSON_AddStringToObject(r, "name", v->name) &&
			cJSON_AddNumberToObject(r, "sizeMB", v->size_mb) &&
			cJSON_AddNumberToObject(r, "createdAt", (double)v->created_ms)
		? store_records_write(vs->state_root, RECORDS_KIND, v->id, r, STORE_DURABLE)
		: -1;
	cJSON_Delete(r);
	return rc;
}

const struct volume *volumes_create(struct volumes *vs, const char *name, int size_mb, struct err *err)
{
	if (!volumes_name_valid(name)) {
		err_set(err, 400,
			"name must be 1 to 64 of A-Z a-z 0-9 . _ - and start with a letter, "
			"a digit or _");
		return NULL;
	}
	if (size_mb < VOLUME_MIN_SIZE_MB || size_mb > VOLUME_MAX_SIZE_MB) {
		err_set(err, 400, "sizeMB must be between %d and %d", VOLUME_MIN_SIZE_MB, VOLUME_MAX_SIZE_MB);
		return NULL;
	}
	if (volumes_find_name(vs, name)) {
		err_set(err, 409, "Volume with name '%s' already exists", name);
		return NULL;
	}
	if (grow(vs) != 0) {
		err_set(err, 500, "out of memory");
		return NULL;
	}
	struct volume *v = calloc(1, sizeof *v);
	if (!v || random_lower_alnum(v->id, VOLUME_ID_LEN) != 0 || !(v->name = strdup(name)) ||
		!(v->data_dir = runtime_volumes_data_dir(v->id))) {
		volume_free(v);
		err_set(err, 500, "out of memory");
		return NULL;
	}
	v->loop = -1;
	v->size_mb = size_mb;
	v->created_ms = clock_now_ms();
	int made = make_data(vs, v);
	if (made == 0)
		crashpoint("volume-made");
	if (made != 0 || save(vs, v) != 0) {
		err_set(err, errno == ENOSPC ? 507 : 500, "cannot make the volume's storage: %s",
			strerror(errno));
		unmount_volume(v);
		char *home = text_printf("%s/%s", vs->dir, v->id);
		if (home)
			tree_remove(home);
		free(home);
		volume_free(v);
		return NULL;
	}
	vs->items[vs->count++] = v;
	return v;
}

/* The first sandbox that mounts volume id, or NULL. */
static const struct sandbox *mounted_by(const struct volumes *vs, const char *id)
{
	for (size_t i = 0; i < registry_count(vs->reg); i++) {
		const struct sandbox *sb = registry_at(vs->reg, i);
		const cJSON *m;
		cJSON_ArrayForEach(m, sb->volume_mounts) {
			const char *vid =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "volumeID"));
			if (vid && strcmp(vid, id) == 0)
				return sb;
		}
	}
	return NULL;
}

int volumes_delete(struct volumes *vs, const char *id, struct err *err)
{
	size_t i = 0;
	while (i < vs->count && strcmp(vs->items[i]->id, id) != 0)
		i++;
	if (i == vs->count) {
		err_set(err, 404, "Volume %.64s not found", id);
		return -1;
	}
	struct volume *v = vs->items[i];
	const struct sandbox *user = mounted_by(vs, id);
	if (user) {
		err_set(err, 409,
			"Volume '%s' is mounted by sandbox %s "
			"(running or paused); kill the sandbox first",
			v->name, user->id);
		return -1;
	}
	if (vs->state_root && store_records_delete(vs->state_root, RECORDS_KIND, v->id, STORE_DURABLE) != 0) {
		err_set(err, 500, "cannot remove the volume's record: %s", strerror(errno));
		return -1;
	}
	vs->items[i] = vs->items[--vs->count];
	/* Gone at once: the data is not wanted any more (a sandbox killed just
	 * before may still hold the filesystem for a moment: detach). */
	if (v->mounted)
		umount2(v->data_dir, MNT_DETACH);
	char *home = text_printf("%s/%s", vs->dir, v->id);
	if (home)
		tree_remove(home);
	free(home);
	volume_free(v);
	return 0;
}

void volumes_token(const struct volumes *vs, const struct volume *v, char *out)
{
	char message[64];
	snprintf(message, sizeof message, "volume:%s", v->id);
	if (hmac_sha256_hex(vs->token_key, message, out) != 0)
		out[0] = '\0';
}

bool volumes_authorized(const struct volumes *vs, const struct volume *v, const char *authorization)
{
	char token[VOLUME_TOKEN_LEN + 1];
	if (!authorization || strncmp(authorization, "Bearer ", 7) != 0)
		return false;
	volumes_token(vs, v, token);
	return token[0] && text_secret_equal(authorization + 7, token);
}
