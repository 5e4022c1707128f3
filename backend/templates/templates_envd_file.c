/* /run/e2b/envd.json in a sandbox (templates_envd_file.h). */
#define _GNU_SOURCE
#include "templates/templates_envd_file.h"

#include "lib/err.h"
#include "lib/sha256.h"
#include "lib/write_all.h"
#include "registry/registry.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_users.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_NAME TEMPLATES_ENVD_FILE_NAME ".new"

static char *file_text(const struct sandbox *sb)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *envs = cJSON_Duplicate(sb->env_vars, true);
	if (!o || !envs || !cJSON_AddItemToObject(o, "envVars", envs)) {
		cJSON_Delete(o);
		cJSON_Delete(envs);
		return NULL;
	}
	if (sb->secure && sb->access_token[0]) {
		uint8_t d[SHA256_DIGEST_LEN];
		char hex[2 * SHA256_DIGEST_LEN + 1];
		sha256(sb->access_token, strlen(sb->access_token), d);
		for (size_t i = 0; i < sizeof d; i++)
			sprintf(hex + 2 * i, "%02x", d[i]);
		cJSON_AddStringToObject(o, "accessTokenSha256", hex);
	}
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* The directory, made (root's, 0755) when missing; every path is resolved
 * inside the sandbox's root: a symbolic link the sandbox made cannot lead
 * the backend out of it. */
static int open_dir(const struct sandbox *sb, uid_t root_uid, gid_t root_gid)
{
	int dir = runtime_open_in_root(sb, TEMPLATES_ENVD_FILE_DIR, O_DIRECTORY | O_RDONLY);
	if (dir >= 0 || errno != ENOENT)
		return dir;
	int run = runtime_open_in_root(sb, "/run", O_DIRECTORY | O_RDONLY);
	if (run < 0)
		return -1;
	const char *leaf = strrchr(TEMPLATES_ENVD_FILE_DIR, '/') + 1;
	int rc = mkdirat(run, leaf, 0755);
	if (rc == 0 && fchownat(run, leaf, root_uid, root_gid, AT_SYMLINK_NOFOLLOW) != 0)
		rc = -1;
	int saved = errno;
	close(run);
	if (rc != 0 && saved != EEXIST) {
		errno = saved;
		return -1;
	}
	return runtime_open_in_root(sb, TEMPLATES_ENVD_FILE_DIR, O_DIRECTORY | O_RDONLY);
}

int templates_envd_file_write(const struct sandbox *sb, struct err *err)
{
	uid_t root_uid = runtime_host_id(sb, 0);
	gid_t root_gid = runtime_host_id(sb, 0);
	char *text = file_text(sb);
	if (!text) {
		err_set(err, 0, "out of memory");
		return -1;
	}
	int dir = open_dir(sb, root_uid, root_gid), fd = -1, rc = -1;
	const char *step = "cannot open " TEMPLATES_ENVD_FILE_DIR;
	if (dir >= 0) {
		unlinkat(dir, TMP_NAME, 0);
		step = "cannot write " TEMPLATES_ENVD_FILE_DIR "/" TEMPLATES_ENVD_FILE_NAME;
		fd = openat(dir, TMP_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd >= 0 && write_all(fd, text, strlen(text)) == 0 && fchown(fd, root_uid, root_gid) == 0 &&
		renameat(dir, TMP_NAME, dir, TEMPLATES_ENVD_FILE_NAME) == 0)
		rc = 0;
	if (rc != 0)
		err_set(err, errno, "%s: %s", step, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	free(text);
	return rc;
}
