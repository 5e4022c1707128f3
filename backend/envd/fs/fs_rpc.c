/* filesystem.Filesystem unary RPCs (see fs_rpc.h), with envd's
 * error codes and texts (docs/e2b-protocol-notes.md, "Filesystem service"). */
#define _GNU_SOURCE
#include "envd/fs/fs_rpc.h"

#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_list.h"
#include "envd/fs/fs_path.h"
#include "envd/fs/fs_remove.h"
#include "http/http_connect.h"
#include "http/http_protojson.h"
#include "http/http_request.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <event2/http.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fs_rpc_errno_text(int e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s", strerror(e));
	if (buf[0])
		buf[0] = (char)tolower((unsigned char)buf[0]);
	return buf;
}

int fs_rpc_user(struct evhttp_request *req, const struct sandbox *sb, struct fs_user *u, struct err *err)
{
	char name[256];
	int given = request_basic_user(req, name, sizeof name);
	if (given < 0 || fs_user_lookup(sb, name, u) != 0) {
		/* envd's GetAuthUser: no user named is the default one, which the
		 * sandbox's /etc/passwd may no longer have. */
		if (given == 0 || (given > 0 && !name[0]))
			err_set(err, CONNECT_UNAUTHENTICATED, "invalid default user: '%.64s'",
				registry_default_user(sb));
		else
			err_set(err, CONNECT_UNAUTHENTICATED, "invalid username: '%.64s'", name);
		return -1;
	}
	return 0;
}

int fs_rpc_path(const char *raw, const struct fs_user *u, char *out, size_t cap, struct err *err)
{
	if (fs_expand(raw, u, out, cap) != 0) {
		err_set(err, CONNECT_INVALID_ARGUMENT, "invalid path '%.200s'", raw);
		return -1;
	}
	return 0;
}

struct call {
	struct fs_user user;
	int root_fd;
	cJSON *msg;
};

/* Codec, user, message and the sandbox root. 0, or the status sent. */
static int begin(struct evhttp_request *req, struct sandbox *sb, struct call *c)
{
	c->root_fd = -1;
	c->msg = NULL;
	int st = connect_check_request(req, CONNECT_UNARY);
	if (st)
		return st;
	struct err err;
	if (fs_rpc_user(req, sb, &c->user, &err) != 0)
		return connect_reply_unary_error(req, &err);
	c->msg = connect_read_unary(req, &err);
	if (!c->msg)
		return connect_reply_unary_error(req, &err);
	c->root_fd = fs_root_open(sb);
	if (c->root_fd < 0) {
		cJSON_Delete(c->msg);
		err_set(&err, CONNECT_INTERNAL, "sandbox root filesystem unavailable");
		return connect_reply_unary_error(req, &err);
	}
	return 0;
}

static int finish(struct evhttp_request *req, struct call *c, cJSON *answer, const struct err *err)
{
	if (c->root_fd >= 0)
		close(c->root_fd);
	cJSON_Delete(c->msg);
	if (!answer)
		return connect_reply_unary_error(req, err);
	return connect_reply_unary(req, answer);
}

/* A path field, expanded for the user. */
static int path_field(struct call *c, const char *name, char *out, struct err *err)
{
	const char *raw = "";
	if (protojson_string(c->msg, name, name, &raw, err) == PROTOJSON_BAD)
		return -1;
	return fs_rpc_path(raw, &c->user, out, FS_PATH_MAX, err);
}

static cJSON *wrap(const char *key, cJSON *entry)
{
	cJSON *msg = entry ? cJSON_CreateObject() : NULL;
	if (msg)
		cJSON_AddItemToObject(msg, key, entry);
	else
		cJSON_Delete(entry);
	return msg;
}

static cJSON *entry_or_error(const struct sandbox *sb, int root_fd, const char *path,
	const char *missing_prefix, const char *op, struct err *err)
{
	cJSON *e = fs_entry_info(sb, root_fd, path, NULL);
	if (!e) {
		char t[128];
		int en = errno;
		fs_rpc_errno_text(en, t, sizeof t);
		if (en == ENOENT || en == ENOTDIR)
			err_set(err, CONNECT_NOT_FOUND, "%s: %s %s: %s", missing_prefix, op, path, t);
		else
			err_set(err, CONNECT_INTERNAL, "error getting file info: %s %s: %s", op, path, t);
	}
	return e;
}

/* A unary RPC that answers at once: begin, then fn builds the answer (NULL
 * with err set), then finish. */
typedef cJSON *(*unary_fn)(const struct sandbox *sb, struct call *c, struct err *err);

static int unary(struct evhttp_request *req, struct sandbox *sb, unary_fn fn)
{
	struct call c;
	int st = begin(req, sb, &c);
	if (st)
		return st;
	struct err err;
	cJSON *answer = fn(sb, &c, &err);
	return finish(req, &c, answer, &err);
}

static cJSON *stat_answer(const struct sandbox *sb, struct call *c, struct err *err)
{
	char path[FS_PATH_MAX];
	if (path_field(c, "path", path, err) != 0)
		return NULL;
	return wrap("entry", entry_or_error(sb, c->root_fd, path, "file not found", "lstat", err));
}

int fs_rpc_stat(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	return unary(req, sb, stat_answer);
}

/* --- ListDir ---------------------------------------------------------------- */

int fs_rpc_list_dir(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	struct call c;
	int st = begin(req, sb, &c);
	if (st)
		return st;
	struct err err;
	char path[FS_PATH_MAX];
	uint32_t depth = 1;
	if (path_field(&c, "path", path, &err) != 0 ||
		protojson_uint32(c.msg, "depth", "depth", &depth, &err) == PROTOJSON_BAD)
		return finish(req, &c, NULL, &err);
	if (depth == 0)
		depth = 1;
	int fd = fs_open(c.root_fd, path, O_PATH, 0, false);
	struct stat sst;
	char t[128];
	if (fd < 0 || fstat(fd, &sst) != 0) {
		int en = errno;
		if (en == ENOENT)
			err_set(&err, CONNECT_NOT_FOUND, "path not found: %s", path);
		else if (en == ELOOP)
			err_set(&err, CONNECT_FAILED_PRECONDITION, "symlink loop: %s: %s", path,
				fs_rpc_errno_text(en, t, sizeof t));
		else if (en == ENOTDIR)
			err_set(&err, CONNECT_INVALID_ARGUMENT, "path is not a directory: %s", path);
		else
			err_set(&err, CONNECT_INTERNAL, "error resolving path %s: %s", path,
				fs_rpc_errno_text(en, t, sizeof t));
	} else if (!S_ISDIR(sst.st_mode)) {
		err_set(&err, CONNECT_INVALID_ARGUMENT, "path is not a directory: %s", path);
	} else {
		close(fd);
		cJSON_Delete(c.msg);
		if (fs_list_start(ctx, req, sb, c.root_fd, path, depth) == 0)
			return FS_STATUS_PENDING;
		c.root_fd = -1; /* taken */
		c.msg = NULL;
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		return finish(req, &c, NULL, &err);
	}
	if (fd >= 0)
		close(fd);
	return finish(req, &c, NULL, &err);
}

/* --- MakeDir, Move, Remove -------------------------------------------------- */

static cJSON *make_dir_answer(const struct sandbox *sb, struct call *c, struct err *err)
{
	char path[FS_PATH_MAX], t[128];
	if (path_field(c, "path", path, err) != 0)
		return NULL;
	cJSON *answer = NULL;
	int fd = fs_open(c->root_fd, path, O_PATH, 0, false);
	struct stat sst;
	if (fd >= 0 && fstat(fd, &sst) == 0) {
		if (S_ISDIR(sst.st_mode))
			err_set(err, CONNECT_ALREADY_EXISTS, "directory already exists: %s", path);
		else
			err_set(err, CONNECT_INVALID_ARGUMENT,
				"path already exists but it is not a directory: %s", path);
	} else if (fs_mkdir_all(c->root_fd, path, c->user.host_uid, c->user.host_gid) != 0) {
		int en = errno;
		err_set(err, en == ENOTDIR ? CONNECT_INVALID_ARGUMENT : CONNECT_INTERNAL,
			"error creating directory: mkdir %s: %s", path, fs_rpc_errno_text(en, t, sizeof t));
	} else {
		answer = wrap("entry", entry_or_error(sb, c->root_fd, path, "file not found", "lstat", err));
	}
	if (fd >= 0)
		close(fd);
	return answer;
}

int fs_rpc_make_dir(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	return unary(req, sb, make_dir_answer);
}

static cJSON *move_answer(const struct sandbox *sb, struct call *c, struct err *err)
{
	char src[FS_PATH_MAX], dst[FS_PATH_MAX], t[128];
	if (path_field(c, "source", src, err) != 0 || path_field(c, "destination", dst, err) != 0)
		return NULL;
	const char *sleaf, *dleaf;
	int sp = fs_open_parent(c->root_fd, src, &sleaf);
	struct stat sst;
	if (sp < 0 || fstatat(sp, sleaf, &sst, AT_SYMLINK_NOFOLLOW) != 0) {
		err_set(err, CONNECT_NOT_FOUND, "source file not found: lstat %s: %s", src,
			fs_rpc_errno_text(errno, t, sizeof t));
		if (sp >= 0)
			close(sp);
		return NULL;
	}
	char dparent[FS_PATH_MAX];
	snprintf(dparent, sizeof dparent, "%s", dst);
	char *slash = strrchr(dparent, '/');
	if (slash)
		*(slash == dparent ? slash + 1 : slash) = '\0';
	cJSON *answer = NULL;
	int dp = -1;
	if (fs_mkdir_all(c->root_fd, dparent, c->user.host_uid, c->user.host_gid) != 0 ||
		(dp = fs_open_parent(c->root_fd, dst, &dleaf)) < 0 || renameat(sp, sleaf, dp, dleaf) != 0) {
		err_set(err, CONNECT_INTERNAL, "error renaming: rename %s %s: %s", src, dst,
			fs_rpc_errno_text(errno, t, sizeof t));
	} else {
		answer = wrap("entry", entry_or_error(sb, c->root_fd, dst, "file not found", "lstat", err));
	}
	close(sp);
	if (dp >= 0)
		close(dp);
	return answer;
}

int fs_rpc_move(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	return unary(req, sb, move_answer);
}

static int answer_remove(struct evhttp_request *req, const char *path, int err)
{
	if (!err)
		return connect_reply_unary(req, cJSON_CreateObject());
	struct err e;
	char t[128];
	err_set(&e, CONNECT_INTERNAL, "error removing file or directory: unlinkat %s: %s", path,
		fs_rpc_errno_text(err, t, sizeof t));
	return connect_reply_unary_error(req, &e);
}

int fs_rpc_remove(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	struct call c;
	int st = begin(req, sb, &c);
	if (st)
		return st;
	struct err err;
	char path[FS_PATH_MAX];
	if (path_field(&c, "path", path, &err) != 0)
		return finish(req, &c, NULL, &err);
	if (fs_remove_for_request(ctx->base, c.root_fd, path, req, "envd", answer_remove) != 0) {
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		return finish(req, &c, NULL, &err);
	}
	close(c.root_fd);
	cJSON_Delete(c.msg);
	return FS_STATUS_PENDING;
}
