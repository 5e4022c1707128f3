/* Uploaded build files (templates_files.h). */
#include "templates/templates_files.h"

#include "lib/err.h"
#include "lib/random.h"
#include "lib/sha256.h"
#include "lib/text.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_users.h"
#include "templates/templates_steps.h"

#include <cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
	char *dir;
	unsigned char secret[32];
	char path[4096];
} files_g;

int templates_files_init(const char *state_root)
{
	files_g.dir = text_printf("%s/template-files", state_root);
	if (!files_g.dir || random_bytes(files_g.secret, sizeof files_g.secret) != 0)
		return -1;
	if (mkdir(files_g.dir, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

void templates_files_shutdown(void)
{
	free(files_g.dir);
	files_g.dir = NULL;
}

bool templates_files_valid_hash(const char *hash)
{
	size_t n = strlen(hash);
	if (n != TEMPLATES_HASH_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((hash[i] >= '0' && hash[i] <= '9') || (hash[i] >= 'a' && hash[i] <= 'f')))
			return false;
	return true;
}

const char *templates_files_path(const char *hash)
{
	snprintf(files_g.path, sizeof files_g.path, "%s/%s", files_g.dir, hash);
	return files_g.path;
}

bool templates_files_present(const char *hash)
{
	struct stat st;
	return templates_files_valid_hash(hash) && stat(templates_files_path(hash), &st) == 0 &&
		S_ISREG(st.st_mode);
}

void templates_files_token(const char *hash, char *out)
{
	unsigned char input[sizeof files_g.secret + TEMPLATES_HASH_LEN], digest[SHA256_DIGEST_LEN];
	memcpy(input, files_g.secret, sizeof files_g.secret);
	memcpy(input + sizeof files_g.secret, hash, TEMPLATES_HASH_LEN);
	sha256(input, sizeof input, digest);
	for (int i = 0; i < SHA256_DIGEST_LEN; i++)
		sprintf(out + 2 * i, "%02x", digest[i]);
}

bool templates_files_token_ok(const char *hash, const char *token)
{
	if (!templates_files_valid_hash(hash) || !token)
		return false;
	char want[TEMPLATES_TOKEN_LEN + 1];
	templates_files_token(hash, want);
	return text_secret_equal(token, want);
}

int templates_files_store(const char *hash, const void *data, size_t len)
{
	char tmp[4200];
	char suffix[17];
	if (!templates_files_valid_hash(hash) || random_hex(suffix, 16) != 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(tmp, sizeof tmp, "%s/.tmp-%s", files_g.dir, suffix);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	const char *p = data;
	size_t left = len;
	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;
			close(fd);
			unlink(tmp);
			errno = e;
			return -1;
		}
		p += n;
		left -= (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, templates_files_path(hash)) != 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* The step's uploaded tar, put in the sandbox's /tmp for its root. */
int templates_files_place(struct sandbox *sb, const char *hash, char *inside, size_t len)
{
	snprintf(inside, len, "/tmp/.e2b-files-%.16s.tar.gz", hash);
	int in = open(templates_files_path(hash), O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = runtime_isolated() ? runtime_open_in_root(sb, inside, O_WRONLY | O_CREAT | O_TRUNC) : -1;
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t n;
	int rc = 0;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (n < 0 || fchown(out, runtime_host_id(sb, 0), runtime_host_id(sb, 0)) != 0)
		rc = -1;
	close(in);
	close(out);
	return rc;
}

static const char *arg(const cJSON *step, int k)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args");
	return k < cJSON_GetArraySize(args) ? cJSON_GetArrayItem(args, k)->valuestring : "";
}

char *templates_files_copy_command(struct sandbox *sb, const cJSON *step, const char *user,
	const char *workdir, struct err *err)
{
	const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "filesHash"));
	char inside[128];
	if (!templates_files_present(hash)) {
		err_set(err, 0, "COPY %.500s %.500s: the files of hash %.64s were not uploaded", arg(step, 0),
			arg(step, 1), hash);
		return NULL;
	}
	if (templates_files_place(sb, hash, inside, sizeof inside) != 0) {
		err_set(err, errno, "COPY %.500s %.500s: cannot put the files in the build sandbox: %s",
			arg(step, 0), arg(step, 1), strerror(errno));
		return NULL;
	}
	if (arg(step, 2)[0])
		user = arg(step, 2);
	char *owner = strchr(user, ':') ? strdup(user) : text_printf("%s:", user);
	char *script = owner ? templates_steps_copy_script(inside, arg(step, 0), arg(step, 1),
				       workdir ? workdir : "/home/user", owner, arg(step, 3))
			     : NULL;
	free(owner);
	if (!script)
		err_set(err, 0, "out of memory");
	return script;
}
