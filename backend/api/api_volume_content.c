/* /volumecontent/{volumeID}/{dir,path,file} (api_volume_content.h). */
#define _GNU_SOURCE
#include "api/api_volume_content.h"

#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_path.h"
#include "envd/fs/fs_remove.h"
#include "http/http_body.h"
#include "http/http_field.h"
#include "http/http_reply.h"
#include "lib/query.h"
#include "volumes/volumes.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_OWNER 1000 /* "user": the owner of a volume's root */
#define MAX_DEPTH 32

/* One request's volume, its root and its query. */
struct vreq {
	const struct volume *v;
	int root; /* O_PATH of the volume's data directory */
	struct query q;
	char path[FS_PATH_MAX]; /* the `path` parameter, absolute and cleaned */
};

static void vreq_free(struct vreq *r)
{
	if (r->root >= 0)
		close(r->root);
	query_free(&r->q);
}

/* Finds and authorises the volume and reads `path`: 0, or the status
 * already answered. */
static int vreq_open(struct api_ctx *ctx, struct evhttp_request *req, const char *id, struct vreq *r)
{
	memset(r, 0, sizeof *r);
	r->root = -1;
	r->v = volumes_find(ctx->volumes, id);
	const char *auth = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	/* An unknown volume and a wrong token look alike: no probing for ids. */
	if (!r->v || !volumes_authorized(ctx->volumes, r->v, auth))
		return reply_error(req, 401, "Invalid volume token");
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	if (query_parse(uri ? evhttp_uri_get_query(uri) : NULL, &r->q) != 0)
		return reply_error(req, 400, "malformed query string");
	const char *path = query_get(&r->q, "path");
	if (!path || !path[0] || strlen(path) + 2 > sizeof r->path)
		return reply_error(req, 400, "query parameter path is required");
	snprintf(r->path, sizeof r->path, "%s%s", path[0] == '/' ? "" : "/", path);
	fs_clean(r->path);
	r->root = open(r->v->data_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->root < 0)
		return reply_errorf(req, 500, "volume storage unavailable: %s", strerror(errno));
	return 0;
}

static int reply_errno(struct evhttp_request *req, const char *path, int err)
{
	if (err == ENOENT)
		return reply_errorf(req, 404, "Path %s not found", path);
	if (err == EEXIST)
		return reply_errorf(req, 409, "Path %s already exists", path);
	if (err == ENOTDIR || err == EISDIR || err == ENOTEMPTY || err == EINVAL)
		return reply_errorf(req, 400, "Path %s: %s", path, strerror(err));
	/* A link that loops, or a link where a write, which never follows one,
	 * would go: the client's path, not the server, is at fault. */
	if (err == ELOOP)
		return reply_errorf(req, 400,
			"Path %s: a symbolic link on it loops, or is its last part "
			"where the call does not follow one",
			path);
	if (err == ENOSPC || err == EDQUOT)
		return reply_errorf(req, 507, "The volume is full");
	return reply_errorf(req, 500, "Path %s: %s", path, strerror(err));
}

/* E2B's VolumeEntryStat of path (not following a last symbolic link). */
static cJSON *entry_json(int root, const char *path)
{
	const char *leaf;
	int parent = fs_open_parent(root, path, &leaf);
	struct stat st;
	if (parent < 0)
		return NULL;
	int rc = fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
	char target[FS_PATH_MAX] = "";
	ssize_t tn =
		rc == 0 && S_ISLNK(st.st_mode) ? readlinkat(parent, leaf, target, sizeof target - 1) : -1;
	int e = errno;
	close(parent);
	if (rc != 0) {
		errno = e;
		return NULL;
	}
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return NULL;
	const char *slash = strrchr(path, '/');
	cJSON_AddStringToObject(o, "name", slash && slash[1] ? slash + 1 : "");
	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddStringToObject(o, "type",
		S_ISREG(st.st_mode)           ? "file"
			: S_ISDIR(st.st_mode) ? "directory"
			: S_ISLNK(st.st_mode) ? "symlink"
					      : "unknown");
	cJSON_AddNumberToObject(o, "size", (double)st.st_size);
	cJSON_AddNumberToObject(o, "mode", st.st_mode & 07777);
	cJSON_AddNumberToObject(o, "uid", st.st_uid);
	cJSON_AddNumberToObject(o, "gid", st.st_gid);
	char t[64];
	fs_rfc3339(&st.st_atim, t, sizeof t);
	cJSON_AddStringToObject(o, "atime", t);
	fs_rfc3339(&st.st_mtim, t, sizeof t);
	cJSON_AddStringToObject(o, "mtime", t);
	fs_rfc3339(&st.st_ctim, t, sizeof t);
	cJSON_AddStringToObject(o, "ctime", t);
	if (tn >= 0) {
		target[tn] = '\0';
		cJSON_AddStringToObject(o, "target", target);
	}
	return o;
}

static int reply_entry(struct evhttp_request *req, struct vreq *r, int status)
{
	cJSON *o = entry_json(r->root, r->path);
	int rc = o ? reply_json(req, status, o) : reply_errno(req, r->path, errno);
	vreq_free(r);
	return rc;
}

/* uid, gid and mode of a new entry from the query; -1 when one is bad. */
static int new_entry_attrs(const struct query *q, unsigned long *uid, unsigned long *gid, unsigned long *mode,
	unsigned long default_mode)
{
	long long u = DEFAULT_OWNER, g = DEFAULT_OWNER, m = (long long)default_mode;
	if (query_number(q, "uid", 0, 0xfffffffe, &u) < 0 || query_number(q, "gid", 0, 0xfffffffe, &g) < 0 ||
		query_number(q, "mode", 0, 07777, &m) < 0)
		return -1;
	*uid = (unsigned long)u;
	*gid = (unsigned long)g;
	*mode = (unsigned long)m;
	return 0;
}

static bool query_true(const struct query *q, const char *name)
{
	const char *s = query_get(q, name);
	return s && strcmp(s, "true") == 0;
}

/* --- dir ------------------------------------------------------------------ */

static int list_into(cJSON *out, int root, const char *dir, int depth)
{
	int fd = fs_open(root, dir, O_RDONLY | O_DIRECTORY, 0, false);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char child[FS_PATH_MAX];
		if (snprintf(child, sizeof child, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, e->d_name) >=
			(int)sizeof child)
			continue;
		cJSON *entry = entry_json(root, child);
		if (!entry)
			continue; /* removed meanwhile */
		bool is_dir =
			strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(entry, "type")), "directory") == 0;
		cJSON_AddItemToArray(out, entry);
		if (is_dir && depth > 1)
			rc = list_into(out, root, child, depth - 1);
	}
	closedir(d);
	return rc;
}

int api_volume_content_list(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	long long depth = 1;
	if (query_number(&r.q, "depth", 1, MAX_DEPTH, &depth) < 0) {
		vreq_free(&r);
		return reply_errorf(req, 400, "depth must be between 1 and %d", MAX_DEPTH);
	}
	cJSON *list = cJSON_CreateArray();
	int rc = list ? list_into(list, r.root, r.path, (int)depth) : -1;
	int e = errno;
	if (rc != 0) {
		cJSON_Delete(list);
		st = reply_errno(req, r.path, e);
	} else {
		st = reply_json(req, 200, list);
	}
	vreq_free(&r);
	return st;
}

int api_volume_content_mkdir(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	unsigned long uid, gid, mode;
	if (st == 0 && new_entry_attrs(&r.q, &uid, &gid, &mode, 0755) != 0)
		st = reply_error(req, 400, "uid, gid and mode must be numbers (mode at most 07777)");
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	int rc;
	if (query_true(&r.q, "force")) {
		rc = fs_mkdir_all(r.root, r.path, (uid_t)uid, (gid_t)gid);
	} else {
		const char *leaf;
		int parent = fs_open_parent(r.root, r.path, &leaf);
		rc = parent < 0 ? -1 : mkdirat(parent, leaf, 0755);
		if (rc == 0)
			rc = fchownat(parent, leaf, (uid_t)uid, (gid_t)gid, AT_SYMLINK_NOFOLLOW);
		if (parent >= 0)
			close(parent);
	}
	if (rc == 0) {
		int fd = fs_open(r.root, r.path, O_RDONLY | O_DIRECTORY, 0, true);
		rc = fd < 0 ? -1 : fchmod(fd, (mode_t)mode);
		if (fd >= 0)
			close(fd);
	}
	if (rc != 0) {
		st = reply_errno(req, r.path, errno);
		vreq_free(&r);
		return st;
	}
	return reply_entry(req, &r, 201);
}

/* --- path ----------------------------------------------------------------- */

int api_volume_content_stat(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	return reply_entry(req, &r, 200);
}

int api_volume_content_update(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	struct err berr;
	cJSON *body = body_parse_object(req, BODY_OPTIONAL, &berr);
	int64_t uid = -1, gid = -1, mode = -1;
	if (!body || field_int(body, "uid", 0, 0xfffffffe, &uid, &berr) == FIELD_BAD ||
		field_int(body, "gid", 0, 0xfffffffe, &gid, &berr) == FIELD_BAD ||
		field_int(body, "mode", 0, 07777, &mode, &berr) == FIELD_BAD) {
		cJSON_Delete(body);
		vreq_free(&r);
		return reply_error(req, berr.status, berr.msg);
	}
	cJSON_Delete(body);
	const char *leaf;
	int parent = fs_open_parent(r.root, r.path, &leaf);
	int rc = parent < 0 ? -1 : 0;
	if (rc == 0 && (uid >= 0 || gid >= 0))
		rc = fchownat(parent, leaf, (uid_t)uid, (gid_t)gid, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
	if (rc == 0 && mode >= 0) {
		/* Not through a symbolic link: chmod would follow it. */
		int fd = fs_open(r.root, r.path, O_PATH, 0, true);
		struct stat sb;
		rc = fd < 0 || fstat(fd, &sb) != 0 ? -1 : S_ISLNK(sb.st_mode) ? 0 : 0;
		if (rc == 0 && !S_ISLNK(sb.st_mode)) {
			char proc[64];
			fs_proc_path(fd, proc, sizeof proc);
			rc = chmod(proc, (mode_t)mode);
		}
		if (fd >= 0)
			close(fd);
	}
	int e = errno;
	if (parent >= 0)
		close(parent);
	if (rc != 0) {
		st = reply_errno(req, r.path, e);
		vreq_free(&r);
		return st;
	}
	return reply_entry(req, &r, 200);
}

static int answer_remove(struct evhttp_request *req, const char *path, int err)
{
	return err ? reply_errno(req, path, err) : reply_empty(req, 204);
}

int api_volume_content_remove(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	if (st == 0 && strcmp(r.path, "/") == 0)
		st = reply_error(req, 400, "The volume's root cannot be removed");
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	/* A missing path is a 404 here (envd's remove ignores it). */
	const char *leaf;
	int parent = fs_open_parent(r.root, r.path, &leaf);
	struct stat sb;
	if (parent < 0 || fstatat(parent, leaf, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
		st = reply_errno(req, r.path, errno);
		if (parent >= 0)
			close(parent);
		vreq_free(&r);
		return st;
	}
	close(parent);
	struct event_base *base = evhttp_connection_get_base(evhttp_request_get_connection(req));
	/* Off the loop in slices (envd/fs/fs_remove.h). */
	if (fs_remove_for_request(base, r.root, r.path, req, "api", answer_remove) != 0) {
		vreq_free(&r);
		return reply_error(req, 500, "out of memory");
	}
	vreq_free(&r);
	return API_STATUS_PENDING;
}

/* --- file ----------------------------------------------------------------- */

int api_volume_content_read(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	int fd = fs_open(r.root, r.path, O_RDONLY, 0, false);
	struct stat sb;
	int e = errno;
	if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
		e = fstat(fd, &sb) == 0 ? EISDIR : errno;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		st = reply_errno(req, r.path, e);
		vreq_free(&r);
		return st;
	}
	struct evbuffer *out = evbuffer_new();
	if (!out || (sb.st_size > 0 && evbuffer_add_file(out, fd, 0, sb.st_size) != 0)) {
		if (out)
			evbuffer_free(out);
		close(fd);
		vreq_free(&r);
		return reply_error(req, 500, "cannot read the file");
	}
	if (sb.st_size == 0)
		close(fd);
	vreq_free(&r);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/octet-stream");
	reply_add_cors(req);
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
	return 200;
}

int api_volume_content_write(struct api_ctx *ctx, struct evhttp_request *req, const char *id)
{
	struct vreq r;
	int st = vreq_open(ctx, req, id, &r);
	unsigned long uid, gid, mode;
	if (st == 0 && new_entry_attrs(&r.q, &uid, &gid, &mode, 0644) != 0)
		st = reply_error(req, 400, "uid, gid and mode must be numbers (mode at most 07777)");
	if (st != 0) {
		vreq_free(&r);
		return st;
	}
	int fd = fs_open(r.root, r.path, O_WRONLY | O_CREAT | O_TRUNC, (mode_t)mode, true);
	int rc = fd < 0 ? -1 : fchown(fd, (uid_t)uid, (gid_t)gid);
	if (rc == 0)
		rc = fchmod(fd, (mode_t)mode);
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	while (rc == 0 && evbuffer_get_length(in) > 0)
		if (evbuffer_write(in, fd) < 0 && errno != EINTR)
			rc = -1;
	int e = errno;
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		st = reply_errno(req, r.path, e);
		vreq_free(&r);
		return st;
	}
	return reply_entry(req, &r, 201);
}
