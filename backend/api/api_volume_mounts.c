/* volumeMounts (api_volume_mounts.h). */
#include "api/api_volume_mounts.h"

#include "runtime/runtime.h"
#include "volumes/volumes.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

/* Absolute, without empty, "." or ".." components, not "/" itself. */
static bool clean_absolute(const char *path)
{
	size_t n = strlen(path);
	if (n < 2 || n > API_VOLUME_MOUNT_PATH_MAX || path[0] != '/' || path[n - 1] == '/')
		return false;
	for (const char *c = path; *c; c++) {
		if (*c != '/')
			continue;
		const char *next = c + 1;
		size_t len = strcspn(next, "/");
		if (len == 0 || (len == 1 && next[0] == '.') || (len == 2 && strncmp(next, "..", 2) == 0))
			return false;
	}
	return true;
}

int api_volume_mounts_read(const cJSON *body, const struct volumes *vs, cJSON **out, struct err *err)
{
	*out = NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(body, "volumeMounts");
	if (!list || cJSON_IsNull(list))
		return 0;
	if (!cJSON_IsArray(list)) {
		body_error_set(err, "field \"volumeMounts\" must be an array");
		return -1;
	}
	if (cJSON_GetArraySize(list) == 0)
		return 0;
	if (!runtime_isolated()) {
		err_set(err, 400, "volumeMounts need sandbox isolation (not --isolation none)");
		return -1;
	}
	if (cJSON_GetArraySize(list) > API_VOLUME_MOUNTS_MAX) {
		body_error_set(err, "field \"volumeMounts\" may list at most %d volumes",
			API_VOLUME_MOUNTS_MAX);
		return -1;
	}
	cJSON *mounts = cJSON_CreateArray();
	const cJSON *m;
	cJSON_ArrayForEach(m, list) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "path"));
		if (!name || !path) {
			body_error_set(err,
				"field \"volumeMounts\" must hold objects with a name and a path");
			goto fail;
		}
		if (!clean_absolute(path)) {
			body_error_set(err,
				"volume mount path \"%.64s\" must be absolute and clean, not /, "
				"at most %d bytes",
				path, API_VOLUME_MOUNT_PATH_MAX);
			goto fail;
		}
		const cJSON *seen;
		cJSON_ArrayForEach(seen, mounts) {
			if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(seen, "path")), path) == 0) {
				body_error_set(err, "volume mount path \"%.64s\" is given twice", path);
				goto fail;
			}
		}
		const struct volume *v = volumes_find_name(vs, name);
		if (!v) {
			err_set(err, 400, "volume '%.64s' not found", name);
			goto fail;
		}
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddStringToObject(o, "name", name) ||
			!cJSON_AddStringToObject(o, "volumeID", v->id) ||
			!cJSON_AddStringToObject(o, "path", path)) {
			cJSON_Delete(o);
			err_set(err, 500, "out of memory");
			goto fail;
		}
		cJSON_AddItemToArray(mounts, o);
	}
	*out = mounts;
	return 0;
fail:
	cJSON_Delete(mounts);
	return -1;
}

cJSON *api_volume_mounts_json(const cJSON *mounts)
{
	cJSON *list = cJSON_CreateArray();
	const cJSON *m;
	cJSON_ArrayForEach(m, mounts) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", cJSON_GetStringValue(cJSON_GetObjectItem(m, "name")));
		cJSON_AddStringToObject(o, "path", cJSON_GetStringValue(cJSON_GetObjectItem(m, "path")));
		cJSON_AddItemToArray(list, o);
	}
	return list;
}
