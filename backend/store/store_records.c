/* Records on disk, written atomically (store_records.h). */
#define _GNU_SOURCE
#include "store/store_records.h"

#include "lib/text.h"
#include "lib/write_all.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAX_BYTES (1024 * 1024)

int store_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > STORE_NAME_MAX || name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-' || c == ':'))
			return 0;
	}
	return 1;
}

/* fsync of the directory holding path: makes a rename or unlink in it last. */
static int sync_parent(const char *path)
{
	char *dir = strdup(path);
	if (!dir)
		return -1;
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -1;
	int rc = fsync(fd);
	close(fd);
	return rc;
}

int store_json_write(const char *path, const cJSON *json, enum store_sync sync)
{
	char *text = cJSON_PrintUnformatted(json);
	char *tmp = text_printf("%s.tmp", path);
	int fd = text && tmp ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	int rc = -1;
	if (!text || !tmp)
		errno = ENOMEM;
	else if (fd >= 0 && write_all(fd, text, strlen(text)) == 0 && write_all(fd, "\n", 1) == 0 &&
		(sync == STORE_VOLATILE || fsync(fd) == 0) && close(fd) == 0) {
		fd = -1;
		rc = rename(tmp, path) != 0 ? -1 : sync == STORE_DURABLE ? sync_parent(path) : 0;
	}
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (rc != 0 && tmp)
		unlink(tmp);
	free(tmp);
	cJSON_free(text);
	errno = e;
	return rc;
}

cJSON *store_json_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *text = NULL;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= RECORD_MAX_BYTES &&
		(text = malloc((size_t)st.st_size + 1)) != NULL) {
		size_t got = 0;
		while (got < (size_t)st.st_size) {
			n = read(fd, text + got, (size_t)st.st_size - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		n = (ssize_t)got;
	}
	close(fd);
	cJSON *json = n >= 0 ? cJSON_ParseWithLength(text, (size_t)n) : NULL;
	free(text);
	if (json && !cJSON_IsObject(json)) {
		cJSON_Delete(json);
		json = NULL;
	}
	if (!json)
		errno = EINVAL;
	return json;
}

/* records/<kind>[/<id>.json]; NULL (errno EINVAL/ENOMEM) for bad names. */
static char *record_path(const char *state_root, const char *kind, const char *id)
{
	if (!store_name_valid(kind) || (id && !store_name_valid(id))) {
		errno = EINVAL;
		return NULL;
	}
	char *path = id ? text_printf("%s/records/%s/%s.json", state_root, kind, id)
			: text_printf("%s/records/%s", state_root, kind);
	if (!path)
		errno = ENOMEM;
	return path;
}

int store_records_write(const char *state_root, const char *kind, const char *id, const cJSON *record,
	enum store_sync sync)
{
	char *dir = record_path(state_root, kind, NULL);
	char *records = text_printf("%s/records", state_root);
	char *path = dir ? record_path(state_root, kind, id) : NULL;
	int rc = -1;
	if (dir && records && path && (mkdir(records, 0700) == 0 || errno == EEXIST) &&
		(mkdir(dir, 0700) == 0 || errno == EEXIST))
		rc = store_json_write(path, record, sync);
	int e = errno;
	free(dir);
	free(records);
	free(path);
	errno = e;
	return rc;
}

cJSON *store_records_read(const char *state_root, const char *kind, const char *id)
{
	char *path = record_path(state_root, kind, id);
	cJSON *json = path ? store_json_read(path) : NULL;
	int e = errno;
	free(path);
	errno = e;
	return json;
}

int store_records_delete(const char *state_root, const char *kind, const char *id, enum store_sync sync)
{
	char *path = record_path(state_root, kind, id);
	if (!path)
		return -1;
	int rc = unlink(path) != 0      ? (errno == ENOENT ? 0 : -1)
		: sync == STORE_DURABLE ? sync_parent(path)
					: 0;
	int e = errno;
	free(path);
	errno = e;
	return rc;
}

int store_records_each(const char *state_root, const char *kind, store_records_fn fn, void *ctx)
{
	char *dir = record_path(state_root, kind, NULL);
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d) {
		int e = errno;
		free(dir);
		errno = e;
		return dir && e == ENOENT ? 0 : -1;
	}
	int count = 0;
	struct dirent *ent;
	while ((ent = readdir(d)) != NULL) {
		const char *name = ent->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		size_t n = strlen(name);
		char id[STORE_NAME_MAX + 1] = "";
		if (n > 5 && n - 5 <= STORE_NAME_MAX && strcmp(name + n - 5, ".json") == 0)
			memcpy(id, name, n - 5);
		char *path = text_printf("%s/%s", dir, name);
		cJSON *record = store_name_valid(id) && path ? store_json_read(path) : NULL;
		free(path);
		if (!record) {
			fprintf(stderr, "e2b-local-backend: records/%s/%s is not a record; ignored\n", kind,
				name);
			continue;
		}
		count++;
		if (fn(ctx, id, record) != 0)
			break;
	}
	closedir(d);
	free(dir);
	return count;
}
