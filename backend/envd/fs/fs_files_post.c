/* POST /files: multipart or octet-stream uploads, gzip, metadata xattrs,
 * parents made for the user (see fs_files_post.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_files_post.h"

#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_files.h"
#include "envd/fs/fs_upload.h"
#include "http/http_conns.h"
#include "http/http_gate.h"
#include "http/http_reply.h"
#include "http/http_request.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* X-Metadata-<key> headers, checked up front (printable ASCII only). */
static int check_metadata(struct evkeyvalq *headers, struct err *e)
{
	for (struct evkeyval *h = headers->tqh_first; h; h = h->next.tqe_next) {
		if (strncasecmp(h->key, "X-Metadata-", 11) != 0)
			continue;
		const char *k = h->key + 11;
		if (!*k)
			return err_set(e, 400, "invalid metadata key: empty");
		for (const char *p = k; *p; p++)
			if (*p < 0x21 || *p > 0x7e)
				return err_set(e, 400, "invalid metadata key: not printable ASCII");
		for (const char *p = h->value; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				return err_set(e, 400, "invalid metadata value: not printable ASCII");
	}
	return 0;
}

/* A write replaces the file's metadata, as on E2B: an overwrite without
 * X-Metadata-* headers leaves none, so the old user.e2b.* xattrs go first. */
static void clear_metadata(int fd)
{
	ssize_t n = flistxattr(fd, NULL, 0);
	char *names = n > 0 ? malloc((size_t)n) : NULL;
	if (names && (n = flistxattr(fd, names, (size_t)n)) > 0)
		for (char *k = names; k < names + n; k += strlen(k) + 1)
			if (strncmp(k, FS_XATTR_PREFIX, strlen(FS_XATTR_PREFIX)) == 0)
				fremovexattr(fd, k);
	free(names);
}

static cJSON *apply_metadata(struct evkeyvalq *headers, int fd)
{
	cJSON *meta = NULL;
	clear_metadata(fd);
	for (struct evkeyval *h = headers->tqh_first; h; h = h->next.tqe_next) {
		if (strncasecmp(h->key, "X-Metadata-", 11) != 0)
			continue;
		char name[300];
		snprintf(name, sizeof name, "%s%s", FS_XATTR_PREFIX, h->key + 11);
		for (char *p = name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		/* XATTR_CREATE after clear_metadata: a key sent twice keeps its
		 * first value, as envd does. */
		if (fsetxattr(fd, name, h->value, strlen(h->value), XATTR_CREATE) != 0)
			continue;
		if (!meta)
			meta = cJSON_CreateObject();
		if (meta)
			cJSON_AddStringToObject(meta, name + strlen(FS_XATTR_PREFIX), h->value);
	}
	return meta;
}

/* Opens one file for writing (truncated) as the user: parents made, owned
 * by the user. Its descriptor, or -1 with e set. */
static int open_target(const struct files_req *f, const char *path, struct err *e)
{
	int probe = fs_open(f->root_fd, path, O_PATH, 0, false);
	struct stat sst;
	if (probe >= 0) {
		int rc = fstat(probe, &sst);
		close(probe);
		if (rc == 0 && S_ISDIR(sst.st_mode))
			return err_set(e, 400, "path '%s' is a directory", path);
		/* Devices and FIFOs inside a sandbox are not written by the backend. */
		if (rc == 0 && !S_ISREG(sst.st_mode))
			return err_set(e, 400, "path '%s' is not a regular file", path);
	}
	char parent[FS_PATH_MAX];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (fs_mkdir_all(f->root_fd, parent, f->user.host_uid, f->user.host_gid) != 0) {
		if (errno == ENOTDIR || errno == EEXIST)
			return err_set(e, 400, "path '%s' is not in a directory", path);
		return fs_upload_io_fail(e, errno, "ensuring directories for", path);
	}
	int fd = fs_open(f->root_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644, false);
	if (fd < 0) {
		if (errno == EISDIR)
			return err_set(e, 400, "path '%s' is a directory", path);
		if (errno == ENXIO)
			return err_set(e, 400, "path '%s' is not a regular file", path);
		return fs_upload_io_fail(e, errno, "opening file", path);
	}
	if (fstat(fd, &sst) != 0 || !S_ISREG(sst.st_mode)) {
		close(fd);
		return err_set(e, 400, "path '%s' is not a regular file", path);
	}
	if (fchown(fd, f->user.host_uid, f->user.host_gid) != 0) {
		int en = errno;
		close(fd);
		return fs_upload_io_fail(e, en, "changing owner of", path);
	}
	return fd;
}

/* A written file's metadata, then its entry in result. Closes fd. */
static int finish_target(int fd, const char *path, struct evkeyvalq *headers, cJSON *result, struct err *e)
{
	cJSON *meta = apply_metadata(headers, fd);
	if (close(fd) != 0) {
		cJSON_Delete(meta);
		return fs_upload_io_fail(e, errno, "closing file", path);
	}
	cJSON *entry = cJSON_CreateObject();
	if (!entry) {
		cJSON_Delete(meta);
		return err_set(e, 500, "out of memory");
	}
	cJSON_AddStringToObject(entry, "path", path);
	cJSON_AddStringToObject(entry, "name", files_base_name(path));
	cJSON_AddStringToObject(entry, "type", "file");
	if (meta)
		cJSON_AddItemToObject(entry, "metadata", meta);
	cJSON_AddItemToArray(result, entry);
	return 0;
}

/* A parameter of a header value such as `form-data; name="file"`. */
static bool header_param(const char *value, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);
	const char *p = strchr(value, ';');
	while (p) {
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncasecmp(p, key, klen) == 0 && p[klen] == '=') {
			p += klen + 1;
			size_t w = 0;
			if (*p == '"') {
				for (p++; *p && *p != '"' && w + 1 < cap; p++) {
					if (*p == '\\' && p[1])
						p++;
					out[w++] = *p;
				}
			} else {
				for (; *p && *p != ';' && *p != ' ' && w + 1 < cap; p++)
					out[w++] = *p;
			}
			out[w] = '\0';
			return true;
		}
		p = strchr(p, ';');
	}
	return false;
}

static bool seen_before(const cJSON *result, const char *path)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, result) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "path");
		if (cJSON_IsString(p) && strcmp(p->valuestring, path) == 0)
			return true;
	}
	return false;
}

/* One upload in progress: the request, its files and their entries. */
struct post {
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	struct files_req f;
	cJSON *result;
	struct fs_upload *upload;
	bool multipart;
	char target[FS_PATH_MAX]; /* the file being written */
};

static void post_free(struct post *p)
{
	fs_upload_free(p->upload);
	files_req_free(&p->f);
	cJSON_Delete(p->result);
	free(p);
}

/* The target of the body (octet-stream) or of a part named "file"; other
 * parts are skipped. */
static int on_begin(void *arg, const char *disposition, char *path, struct err *e)
{
	struct post *p = arg;
	const struct files_req *f = &p->f;
	if (p->multipart) {
		char name[64], filename[FS_PATH_MAX];
		if (!header_param(disposition, "name", name, sizeof name) || strcmp(name, "file") != 0)
			return FS_UPLOAD_SKIP;
		if (f->has_path) {
			snprintf(p->target, sizeof p->target, "%s", f->path);
		} else {
			if (!header_param(disposition, "filename", filename, sizeof filename) || !filename[0])
				return err_set(e, 400, "missing filename in multipart part");
			if (fs_expand(filename, &f->user, p->target, sizeof p->target) != 0)
				return err_set(e, 400, "invalid path '%s'", filename);
		}
		if (seen_before(p->result, p->target))
			return err_set(e, 400, "cannot upload multiple files to the same path '%s'",
				p->target);
	} else {
		snprintf(p->target, sizeof p->target, "%s", f->path);
	}
	snprintf(path, FS_PATH_MAX, "%s", p->target);
	return open_target(f, p->target, e);
}

static int on_end(void *arg, int fd, struct err *e)
{
	struct post *p = arg;
	return finish_target(fd, p->target, evhttp_request_get_input_headers(p->req), p->result, e);
}

static void on_done(void *arg, const struct err *e)
{
	struct post *p = arg;
	http_conn_set_closecb(p->evcon, NULL, NULL);
	int status;
	if (e->status) {
		status = reply_error(p->req, e->status, e->msg);
	} else {
		status = reply_json(p->req, 200, p->result);
		p->result = NULL;
	}
	request_log("envd", p->req, status);
	post_free(p);
}

/* The client went away (or the sandbox was killed) mid-upload. */
static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct post *p = arg;
	struct evhttp_request *req = p->req;
	post_free(p);
	http_conn_gone_free_request(req);
}

/* What the headers alone decide: 0 and the body's form, or the status of
 * the error answer. */
static int check_request(struct evhttp_request *req, const struct files_req *f, bool *gzip, char *boundary,
	size_t cap, struct err *e)
{
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	const char *ctype = evhttp_find_header(in, "Content-Type");
	const char *cenc = evhttp_find_header(in, "Content-Encoding");
	*gzip = cenc && strcasecmp(cenc, "gzip") == 0;
	size_t mlen = ctype ? strcspn(ctype, ";") : 0;
	while (mlen > 0 && (ctype[mlen - 1] == ' ' || ctype[mlen - 1] == '\t'))
		mlen--;
	boundary[0] = '\0';
	if (cenc && !*gzip && strcasecmp(cenc, "identity") != 0)
		return err_set(e, 400, "unsupported Content-Encoding '%.40s'", cenc);
	if (check_metadata(in, e) != 0)
		return -1;
	if (mlen == 24 && strncasecmp(ctype, "application/octet-stream", 24) == 0)
		return f->has_path ? 0
				   : err_set(e, 400, "path is required for application/octet-stream uploads");
	if (mlen == 19 && strncasecmp(ctype, "multipart/form-data", 19) == 0) {
		if (!header_param(ctype, "boundary", boundary, cap) || !boundary[0])
			return err_set(e, 400, "multipart upload without a boundary");
		return 0;
	}
	return err_set(e, 400,
		"unsupported Content-Type '%.80s': use multipart/form-data or application/octet-stream",
		ctype ? ctype : "");
}

int files_post(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	struct post *p = calloc(1, sizeof *p);
	if (!p)
		return reply_error(req, 500, "out of memory");
	int st = files_prelude(req, sb, "write", &p->f);
	if (st) {
		free(p);
		return st;
	}
	struct err e;
	err_clear(&e);
	bool gzip;
	char boundary[200];
	struct http_gate *gate = http_conns_gate(req);
	p->req = req;
	p->evcon = evhttp_request_get_connection(req);
	p->result = cJSON_CreateArray();
	if (!p->result || !gate)
		err_set(&e, 500, "out of memory");
	else if (check_request(req, &p->f, &gzip, boundary, sizeof boundary, &e) == 0) {
		p->multipart = boundary[0] != '\0';
		struct fs_upload_sink sink = {.begin = on_begin, .end = on_end, .done = on_done, .arg = p};
		p->upload = fs_upload_start(ctx->base, gate, gzip, p->multipart ? boundary : NULL,
			ctx->max_upload_bytes, &sink);
		if (!p->upload)
			err_set(&e, p->multipart ? 400 : 500,
				p->multipart ? "invalid multipart boundary" : "out of memory");
	}
	if (e.status) {
		post_free(p);
		return reply_error(req, e.status, e.msg);
	}
	http_conn_set_closecb(p->evcon, on_client_gone, p);
	return FS_STATUS_PENDING;
}
