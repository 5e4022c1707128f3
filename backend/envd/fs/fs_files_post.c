/* POST /files: multipart or octet-stream uploads, gzip, metadata xattrs,
 * parents made for the user (see fs_files_post.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_files_post.h"

#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_files.h"
#include "http/http_reply.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <zlib.h>

struct upload_error {
	int status;
	char message[FS_PATH_MAX + 128];
};

static int upload_fail(struct upload_error *e, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int upload_fail(struct upload_error *e, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	e->status = status;
	vsnprintf(e->message, sizeof e->message, fmt, ap);
	va_end(ap);
	return -1;
}

static int io_fail(struct upload_error *e, int en, const char *what, const char *path)
{
	if (en == ENOSPC || en == EDQUOT)
		return upload_fail(e, 507, "not enough disk space available");
	return upload_fail(e, 500, "error %s '%s': %s", what, path, strerror(en));
}

/* X-Metadata-<key> headers, checked up front (printable ASCII only). */
static int check_metadata(struct evkeyvalq *headers, struct upload_error *e)
{
	for (struct evkeyval *h = headers->tqh_first; h; h = h->next.tqe_next) {
		if (strncasecmp(h->key, "X-Metadata-", 11) != 0)
			continue;
		const char *k = h->key + 11;
		if (!*k)
			return upload_fail(e, 400, "invalid metadata key: empty");
		for (const char *p = k; *p; p++)
			if (*p < 0x21 || *p > 0x7e)
				return upload_fail(e, 400, "invalid metadata key: not printable ASCII");
		for (const char *p = h->value; *p; p++)
			if (*p < 0x20 || *p > 0x7e)
				return upload_fail(e, 400, "invalid metadata value: not printable ASCII");
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

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Inflates the gzip stream in src (read in place, piece by piece) into fd,
 * or into out when fd < 0. */
static int gunzip(struct evbuffer *src, int fd, struct evbuffer *out, const char *path,
	struct upload_error *e)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return upload_fail(e, 500, "out of memory");
	int rc = Z_OK;
	uint8_t tmp[65536];
	struct evbuffer_ptr pos;
	evbuffer_ptr_set(src, &pos, 0, EVBUFFER_PTR_SET);
	struct evbuffer_iovec seg;
	while (rc != Z_STREAM_END && evbuffer_peek(src, -1, &pos, &seg, 1) > 0) {
		z.next_in = seg.iov_base;
		z.avail_in = (uInt)seg.iov_len;
		while (rc != Z_STREAM_END && z.avail_in > 0) {
			z.next_out = tmp;
			z.avail_out = sizeof tmp;
			uInt before = z.avail_in;
			rc = inflate(&z, Z_NO_FLUSH);
			bool stuck = rc == Z_BUF_ERROR && z.avail_in == before && z.avail_out == sizeof tmp;
			if ((rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) || stuck) {
				inflateEnd(&z);
				return upload_fail(e, 400, "invalid gzip data");
			}
			size_t got = sizeof tmp - z.avail_out;
			if (fd >= 0 ? write_all(fd, tmp, got) != 0 : evbuffer_add(out, tmp, got) != 0) {
				int en = errno;
				inflateEnd(&z);
				return io_fail(e, en, "writing file", path);
			}
		}
		if (evbuffer_ptr_set(src, &pos, seg.iov_len, EVBUFFER_PTR_ADD) != 0)
			break;
	}
	/* Output still held inside zlib once the input is used up. */
	while (rc == Z_OK) {
		z.next_out = tmp;
		z.avail_out = sizeof tmp;
		rc = inflate(&z, Z_NO_FLUSH);
		size_t got = sizeof tmp - z.avail_out;
		if (got && (fd >= 0 ? write_all(fd, tmp, got) != 0 : evbuffer_add(out, tmp, got) != 0)) {
			int en = errno;
			inflateEnd(&z);
			return io_fail(e, en, "writing file", path);
		}
		if (got == 0)
			break;
	}
	inflateEnd(&z);
	if (rc != Z_STREAM_END)
		return upload_fail(e, 400, "invalid gzip data: unexpected EOF");
	return 0;
}

/* Writes every piece of src to fd, without copying it into one block. */
static int write_buffer(int fd, struct evbuffer *src)
{
	struct evbuffer_ptr pos;
	evbuffer_ptr_set(src, &pos, 0, EVBUFFER_PTR_SET);
	struct evbuffer_iovec seg;
	while (evbuffer_peek(src, -1, &pos, &seg, 1) > 0) {
		if (write_all(fd, seg.iov_base, seg.iov_len) != 0)
			return -1;
		if (evbuffer_ptr_set(src, &pos, seg.iov_len, EVBUFFER_PTR_ADD) != 0)
			break;
	}
	return 0;
}

/* Writes one file (truncating it) as the user; its entry goes to result. */
static int write_target(const struct files_req *f, const char *path, struct evbuffer *src,
	bool gzip, struct evkeyvalq *headers, cJSON *result, struct upload_error *e)
{
	int probe = fs_open(f->root_fd, path, O_PATH, 0, false);
	struct stat sst;
	if (probe >= 0) {
		int rc = fstat(probe, &sst);
		close(probe);
		if (rc == 0 && S_ISDIR(sst.st_mode))
			return upload_fail(e, 400, "path '%s' is a directory", path);
		/* Devices and FIFOs inside a sandbox are not written by the backend. */
		if (rc == 0 && !S_ISREG(sst.st_mode))
			return upload_fail(e, 400, "path '%s' is not a regular file", path);
	}
	char parent[FS_PATH_MAX];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (fs_mkdir_all(f->root_fd, parent, f->user.host_uid, f->user.host_gid) != 0) {
		if (errno == ENOTDIR || errno == EEXIST)
			return upload_fail(e, 400, "path '%s' is not in a directory", path);
		return io_fail(e, errno, "ensuring directories for", path);
	}
	int fd = fs_open(f->root_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644, false);
	if (fd < 0) {
		if (errno == EISDIR)
			return upload_fail(e, 400, "path '%s' is a directory", path);
		if (errno == ENXIO)
			return upload_fail(e, 400, "path '%s' is not a regular file", path);
		return io_fail(e, errno, "opening file", path);
	}
	if (fstat(fd, &sst) != 0 || !S_ISREG(sst.st_mode)) {
		close(fd);
		return upload_fail(e, 400, "path '%s' is not a regular file", path);
	}
	int rc = fchown(fd, f->user.host_uid, f->user.host_gid) != 0 ? io_fail(e, errno, "changing owner of", path) : 0;
	if (rc == 0) {
		if (gzip)
			rc = gunzip(src, fd, NULL, path, e);
		else if (write_buffer(fd, src) != 0)
			rc = io_fail(e, errno, "writing file", path);
	}
	cJSON *meta = rc == 0 ? apply_metadata(headers, fd) : NULL;
	if (close(fd) != 0 && rc == 0)
		rc = io_fail(e, errno, "closing file", path);
	if (rc != 0) {
		cJSON_Delete(meta);
		return rc;
	}
	cJSON *entry = cJSON_CreateObject();
	if (!entry) {
		cJSON_Delete(meta);
		return upload_fail(e, 500, "out of memory");
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
	cJSON_ArrayForEach(e, result)
	{
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "path");
		if (cJSON_IsString(p) && strcmp(p->valuestring, path) == 0)
			return true;
	}
	return false;
}

static int multipart(const struct files_req *f, const uint8_t *body, size_t n,
	const char *boundary, struct evkeyvalq *headers, cJSON *result, struct upload_error *e)
{
	char delim[256];
	int dn = snprintf(delim, sizeof delim, "\r\n--%s", boundary);
	if (dn < 0 || (size_t)dn >= sizeof delim || !boundary[0])
		return upload_fail(e, 400, "invalid multipart boundary");
	/* The first delimiter may start the body without a CRLF before it. */
	const uint8_t *p;
	if (n >= (size_t)dn - 2 && memcmp(body, delim + 2, (size_t)dn - 2) == 0) {
		p = body + dn - 2;
	} else {
		p = memmem(body, n, delim, (size_t)dn);
		if (p)
			p += dn;
	}
	const uint8_t *end = body + n;
	for (;;) {
		if (!p || end - p < 2)
			return upload_fail(e, 400, "malformed multipart body");
		if (p[0] == '-' && p[1] == '-')
			return 0;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
			return upload_fail(e, 400, "malformed multipart body");
		p += 2;
		const uint8_t *hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		bool no_headers = end - p >= 2 && p[0] == '\r' && p[1] == '\n';
		if (!hend && !no_headers)
			return upload_fail(e, 400, "malformed multipart part headers");
		const uint8_t *data = no_headers ? p + 2 : hend + 4;
		char disposition[FS_PATH_MAX + 256] = "";
		for (const uint8_t *line = p; !no_headers && line < hend;) {
			const uint8_t *eol = memmem(line, (size_t)(hend + 2 - line), "\r\n", 2);
			size_t ll = (size_t)(eol - line);
			if (ll > 20 && strncasecmp((const char *)line, "Content-Disposition:", 20) == 0)
				snprintf(disposition, sizeof disposition, "%.*s", (int)(ll - 20), line + 20);
			line = eol + 2;
		}
		const uint8_t *next = memmem(data, (size_t)(end - data), delim, (size_t)dn);
		if (!next)
			return upload_fail(e, 400, "malformed multipart body: missing closing boundary");
		char name[64], filename[FS_PATH_MAX];
		if (header_param(disposition, "name", name, sizeof name) && strcmp(name, "file") == 0) {
			char target[FS_PATH_MAX];
			if (f->has_path) {
				snprintf(target, sizeof target, "%s", f->path);
			} else {
				if (!header_param(disposition, "filename", filename, sizeof filename) || !filename[0])
					return upload_fail(e, 400, "missing filename in multipart part");
				if (fs_expand(filename, &f->user, target, sizeof target) != 0)
					return upload_fail(e, 400, "invalid path '%s'", filename);
			}
			if (seen_before(result, target))
				return upload_fail(e, 400, "cannot upload multiple files to the same path '%s'", target);
			/* The part's bytes, referenced in place. */
			struct evbuffer *part = evbuffer_new();
			if (!part || evbuffer_add_reference(part, data, (size_t)(next - data), NULL, NULL) != 0) {
				if (part)
					evbuffer_free(part);
				return upload_fail(e, 500, "out of memory");
			}
			int rc = write_target(f, target, part, false, headers, result, e);
			evbuffer_free(part);
			if (rc != 0)
				return -1;
		}
		p = next + dn;
	}
}

int files_post(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	struct files_req f;
	int st = files_prelude(req, sb, "write", &f);
	if (st)
		return st;
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evbuffer *body = evhttp_request_get_input_buffer(req);
	struct upload_error e = {0, ""};
	cJSON *result = cJSON_CreateArray();
	const char *ctype = evhttp_find_header(in, "Content-Type");
	const char *cenc = evhttp_find_header(in, "Content-Encoding");
	bool gzip = cenc && strcasecmp(cenc, "gzip") == 0;
	struct evbuffer *inflated = NULL;
	size_t mlen = ctype ? strcspn(ctype, ";") : 0;
	while (mlen > 0 && (ctype[mlen - 1] == ' ' || ctype[mlen - 1] == '\t'))
		mlen--;
	if (!result) {
		upload_fail(&e, 500, "out of memory");
	} else if (cenc && !gzip && strcasecmp(cenc, "identity") != 0) {
		upload_fail(&e, 400, "unsupported Content-Encoding '%.40s'", cenc);
	} else if (check_metadata(in, &e) != 0) {
		/* e is set */
	} else if (mlen == 24 && strncasecmp(ctype, "application/octet-stream", 24) == 0) {
		if (!f.has_path)
			upload_fail(&e, 400, "path is required for application/octet-stream uploads");
		else
			write_target(&f, f.path, body, gzip, in, result, &e);
	} else if (mlen == 19 && strncasecmp(ctype, "multipart/form-data", 19) == 0) {
		char boundary[200];
		if (!header_param(ctype, "boundary", boundary, sizeof boundary)) {
			upload_fail(&e, 400, "multipart upload without a boundary");
		} else {
			struct evbuffer *src = body;
			if (gzip) {
				inflated = evbuffer_new();
				if (!inflated)
					upload_fail(&e, 500, "out of memory");
				else if (gunzip(body, -1, inflated, f.path, &e) == 0)
					src = inflated;
			}
			/* The parser needs the body in one block. */
			size_t n = evbuffer_get_length(src);
			const uint8_t *data = n ? evbuffer_pullup(src, -1) : (const uint8_t *)"";
			if (e.status == 0 && !data)
				upload_fail(&e, 500, "out of memory");
			if (e.status == 0)
				multipart(&f, data, n, boundary, in, result, &e);
		}
	} else {
		upload_fail(&e, 400, "unsupported Content-Type '%.80s': use multipart/form-data or application/octet-stream",
			ctype ? ctype : "");
	}
	if (inflated)
		evbuffer_free(inflated);
	files_req_free(&f);
	if (e.status) {
		cJSON_Delete(result);
		return reply_error(req, e.status, e.message);
	}
	return reply_json(req, 200, result);
}
