/* GET and POST /files (see files_http.h). */
#define _GNU_SOURCE
#include "files_http.h"

#include "files_auth.h"
#include "fs_entry.h"
#include "fs_path.h"
#include "http_reply.h"
#include "query_string.h"
#include "registry.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* --- common prelude: query, signature or token, user, path ------------------ */

struct files_req {
	struct query q;
	struct fs_user user;
	int root_fd;
	bool has_path;
	char path[FS_PATH_MAX];
};

static void files_req_free(struct files_req *f)
{
	query_free(&f->q);
	if (f->root_fd >= 0)
		close(f->root_fd);
}

/* 0 when the request may go on; else the status it answered with. */
static int prelude(struct evhttp_request *req, struct sandbox *sb, const char *op,
	struct files_req *f)
{
	f->root_fd = -1;
	f->q.pairs = NULL;
	f->q.count = 0;
	if (query_parse(evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req)), &f->q) != 0)
		return reply_error(req, 400, "invalid query string");
	char why[128];
	if (files_auth_check(sb, req, &f->q, op, why, sizeof why) != 0)
		return reply_error(req, 401, why);
	const char *name = query_get(&f->q, "username");
	if (fs_user_lookup(sb, name, &f->user) != 0)
		return reply_errorf(req, 401, "error looking up user '%.64s': user: unknown user %.64s",
			name ? name : "", name ? name : "");
	const char *path = query_get(&f->q, "path");
	f->has_path = path != NULL;
	if (fs_expand(path ? path : "", &f->user, f->path, sizeof f->path) != 0)
		return reply_errorf(req, 400, "error resolving path '%.200s'", path ? path : "");
	f->root_fd = fs_root_open(sb);
	if (f->root_fd < 0)
		return reply_error(req, 500, "sandbox root filesystem unavailable");
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* --- GET -------------------------------------------------------------------- */

/* Content-Disposition as Go's mime.FormatMediaType writes it. */
static void add_disposition(struct evkeyvalq *out, const char *name)
{
	static const char tspecials[] = "()<>@,;:\\\"/[]?=";
	bool token = *name, ascii = true;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (*p >= 0x80 || *p < 0x20 || *p == 0x7f)
			ascii = false;
		if (*p <= ' ' || *p >= 0x7f || strchr(tspecials, *p))
			token = false;
	}
	char buf[FS_PATH_MAX * 3 + 64];
	size_t w = 0;
	if (token) {
		snprintf(buf, sizeof buf, "inline; filename=%s", name);
	} else if (ascii) {
		w = (size_t)snprintf(buf, sizeof buf, "inline; filename=\"");
		for (const char *p = name; *p && w + 4 < sizeof buf; p++) {
			if (*p == '"' || *p == '\\')
				buf[w++] = '\\';
			buf[w++] = *p;
		}
		snprintf(buf + w, sizeof buf - w, "\"");
	} else {
		w = (size_t)snprintf(buf, sizeof buf, "inline; filename*=utf-8''");
		for (const unsigned char *p = (const unsigned char *)name; *p && w + 4 < sizeof buf; p++) {
			if (isalnum(*p) || strchr("!#$&+-.^_`|~", *p))
				buf[w++] = (char)*p;
			else
				w += (size_t)snprintf(buf + w, sizeof buf - w, "%%%02X", *p);
		}
		buf[w] = '\0';
	}
	evhttp_add_header(out, "Content-Disposition", buf);
}

/* Accept-Encoding: 1 gzip, 0 identity, -1 nothing acceptable (406). */
static int pick_encoding(const char *header)
{
	if (!header)
		return 0;
	double q_gzip = -1, q_identity = -1, q_star = -1;
	const char *p = header;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *end = p + strcspn(p, ",");
		size_t name_len = strcspn(p, ";, ");
		if (name_len > (size_t)(end - p))
			name_len = (size_t)(end - p);
		double q = 1;
		const char *qp = strstr(p, "q=");
		if (qp && qp < end)
			q = strtod(qp + 2, NULL);
		if (name_len == 4 && strncasecmp(p, "gzip", 4) == 0)
			q_gzip = q;
		else if (name_len == 8 && strncasecmp(p, "identity", 8) == 0)
			q_identity = q;
		else if (name_len == 1 && *p == '*')
			q_star = q;
		p = end;
	}
	if (q_gzip < 0)
		q_gzip = q_star;
	if (q_gzip > 0)
		return 1;
	if (q_identity < 0)
		q_identity = q_star < 0 ? 1 : q_star;
	return q_identity > 0 ? 0 : -1;
}

/* One byte range of a file of size n. 0 none (or unusable: whole file),
 * 1 range set, -1 unsatisfiable. */
static int parse_range(const char *h, uint64_t n, uint64_t *start, uint64_t *len)
{
	if (!h || strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
		return 0;
	const char *s = h + 6;
	char *end;
	if (*s == '-') {
		unsigned long long suffix = strtoull(s + 1, &end, 10);
		if (end == s + 1 || *end)
			return 0;
		if (suffix == 0)
			return -1;
		*len = suffix > n ? n : suffix;
		*start = n - *len;
		return n ? 1 : -1;
	}
	unsigned long long a = strtoull(s, &end, 10);
	if (end == s || *end != '-')
		return 0;
	const char *b = end + 1;
	unsigned long long last = n ? n - 1 : 0;
	if (*b) {
		last = strtoull(b, &end, 10);
		if (*end || last < a)
			return 0;
		if (last >= n)
			last = n - 1;
	}
	if (a >= n)
		return -1;
	*start = a;
	*len = last - a + 1;
	return 1;
}

struct file_send {
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	int fd;
	uint64_t pos, remaining;
	bool gzip;
	z_stream z;
	uint8_t *in;
	struct evbuffer *out;
};

static void send_free(struct file_send *s)
{
	if (s->gzip)
		deflateEnd(&s->z);
	close(s->fd);
	free(s->in);
	if (s->out)
		evbuffer_free(s->out);
	free(s);
}

static void on_send_closed(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct file_send *s = arg;
	bool ours = evhttp_request_get_connection(s->req) == NULL;
	if (ours)
		evhttp_request_free(s->req);
	send_free(s);
}

static void pump(struct file_send *s);

static void on_send_drained(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	pump(arg);
}

/* Compresses n bytes (flush: Z_NO_FLUSH or Z_FINISH) into s->out. */
static int deflate_into(struct file_send *s, const uint8_t *data, size_t n, int flush)
{
	s->z.next_in = (Bytef *)(uintptr_t)data;
	s->z.avail_in = (uInt)n;
	for (;;) {
		uint8_t tmp[65536];
		s->z.next_out = tmp;
		s->z.avail_out = sizeof tmp;
		int rc = deflate(&s->z, flush);
		if (rc == Z_STREAM_ERROR)
			return -1;
		evbuffer_add(s->out, tmp, sizeof tmp - s->z.avail_out);
		if (flush == Z_FINISH ? rc == Z_STREAM_END : s->z.avail_out != 0)
			return 0;
	}
}

/* Sends pieces while the connection has room; finishes at the end. */
static void pump(struct file_send *s)
{
	struct evbuffer *conn_out = bufferevent_get_output(evhttp_connection_get_bufferevent(s->evcon));
	while (evbuffer_get_length(conn_out) < FILES_HIGH_WATER) {
		bool done = s->remaining == 0;
		if (!done) {
			size_t want = s->remaining < FILES_READ_CHUNK ? (size_t)s->remaining : FILES_READ_CHUNK;
			ssize_t got = pread(s->fd, s->in, want, (off_t)s->pos);
			if (got <= 0) {
				/* The file shrank or failed under us: the body is cut short,
				 * so drop the connection rather than end it cleanly. */
				evhttp_connection_set_closecb(s->evcon, NULL, NULL);
				evhttp_request_free(s->req);
				send_free(s);
				return;
			}
			s->pos += (uint64_t)got;
			s->remaining -= (uint64_t)got;
			if (s->gzip)
				deflate_into(s, s->in, (size_t)got, Z_NO_FLUSH);
			else
				evbuffer_add(s->out, s->in, (size_t)got);
			done = s->remaining == 0;
		}
		if (done && s->gzip)
			deflate_into(s, NULL, 0, Z_FINISH);
		if (evbuffer_get_length(s->out) > 0 || !done)
			evhttp_send_reply_chunk_with_cb(s->req, s->out, done ? NULL : on_send_drained, s);
		if (done) {
			evhttp_connection_set_closecb(s->evcon, NULL, NULL);
			evhttp_send_reply_end(s->req);
			send_free(s);
			return;
		}
	}
}

static void http_date(time_t t, char *buf, size_t cap)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, cap, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

int files_get(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	struct files_req f;
	int st = prelude(req, sb, "read", &f);
	if (st) {
		files_req_free(&f);
		return st;
	}
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evkeyvalq *out = evhttp_request_get_output_headers(req);
	int fd = fs_open(f.root_fd, f.path, O_RDONLY | O_NONBLOCK, 0, false);
	struct stat sst;
	if (fd < 0 || fstat(fd, &sst) != 0) {
		int en = errno;
		if (fd >= 0)
			close(fd);
		files_req_free(&f);
		if (en == ENOENT || en == ENOTDIR)
			return reply_errorf(req, 404, "path '%s' does not exist", f.path);
		return reply_errorf(req, 500, "error checking if path exists: %s", strerror(en));
	}
	files_req_free(&f);
	if (S_ISDIR(sst.st_mode)) {
		close(fd);
		return reply_errorf(req, 400, "path '%s' is a directory", f.path);
	}
	if (!S_ISREG(sst.st_mode)) {
		close(fd);
		return reply_errorf(req, 400, "path '%s' is not a regular file", f.path);
	}
	int enc = pick_encoding(evhttp_find_header(in, "Accept-Encoding"));
	if (enc < 0) {
		close(fd);
		return reply_error(req, 406, "no acceptable encoding: identity or gzip");
	}
	evhttp_add_header(out, "Vary", "Accept-Encoding");
	const char *range = evhttp_find_header(in, "Range");
	if (range || evhttp_find_header(in, "If-Modified-Since") || evhttp_find_header(in, "If-None-Match") ||
	    evhttp_find_header(in, "If-Range") || evhttp_find_header(in, "If-Match") ||
	    evhttp_find_header(in, "If-Unmodified-Since"))
		enc = 0; /* envd keeps http.ServeContent's range handling */
	uint64_t size = (uint64_t)sst.st_size, start = 0, len = size;
	int r = enc ? 0 : parse_range(range, size, &start, &len);
	char num[96];
	if (r < 0) {
		close(fd);
		snprintf(num, sizeof num, "bytes */%" PRIu64, size);
		evhttp_add_header(out, "Content-Range", num);
		return reply_error(req, 416, "invalid range: failed to overlap");
	}
	add_disposition(out, base_name(f.path));
	http_date(sst.st_mtim.tv_sec, num, sizeof num);
	evhttp_add_header(out, "Last-Modified", num);
	evhttp_add_header(out, "Content-Type", "application/octet-stream");
	if (enc) {
		evhttp_add_header(out, "Content-Encoding", "gzip");
	} else {
		evhttp_add_header(out, "Accept-Ranges", "bytes");
		snprintf(num, sizeof num, "%" PRIu64, len);
		evhttp_add_header(out, "Content-Length", num);
	}
	if (r > 0) {
		snprintf(num, sizeof num, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, start, start + len - 1, size);
		evhttp_add_header(out, "Content-Range", num);
	}
	int status = r > 0 ? 206 : 200;
	reply_add_cors(req);
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
		close(fd);
		evhttp_send_reply(req, status, r > 0 ? "Partial Content" : "OK", NULL);
		return status;
	}
	int flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	struct file_send *s = calloc(1, sizeof *s);
	if (!s || !(s->in = malloc(FILES_READ_CHUNK)) || !(s->out = evbuffer_new()) ||
	    (enc && deflateInit2(&s->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)) {
		if (s) {
			free(s->in);
			if (s->out)
				evbuffer_free(s->out);
			free(s);
		}
		close(fd);
		return reply_error(req, 500, "out of memory");
	}
	s->req = req;
	s->evcon = evhttp_request_get_connection(req);
	s->fd = fd;
	s->pos = start;
	s->remaining = len;
	s->gzip = enc == 1;
	evhttp_send_reply_start(req, status, r > 0 ? "Partial Content" : "OK");
	evhttp_connection_set_closecb(s->evcon, on_send_closed, s);
	pump(s);
	return status;
}

/* --- POST ------------------------------------------------------------------- */

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

static cJSON *apply_metadata(struct evkeyvalq *headers, int fd)
{
	cJSON *meta = NULL;
	for (struct evkeyval *h = headers->tqh_first; h; h = h->next.tqe_next) {
		if (strncasecmp(h->key, "X-Metadata-", 11) != 0)
			continue;
		char name[300];
		snprintf(name, sizeof name, "%s%s", FS_XATTR_PREFIX, h->key + 11);
		for (char *p = name; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (fsetxattr(fd, name, h->value, strlen(h->value), 0) != 0)
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

/* Inflates a gzip stream into fd, or into buf when fd < 0. */
static int gunzip(const uint8_t *data, size_t n, int fd, struct evbuffer *buf,
	const char *path, struct upload_error *e)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return upload_fail(e, 500, "out of memory");
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n);
	int rc = Z_OK;
	uint8_t tmp[65536];
	while (rc != Z_STREAM_END) {
		z.next_out = tmp;
		z.avail_out = sizeof tmp;
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END) {
			inflateEnd(&z);
			return upload_fail(e, 400, "invalid gzip data");
		}
		size_t got = sizeof tmp - z.avail_out;
		if (fd >= 0 ? write_all(fd, tmp, got) != 0 : evbuffer_add(buf, tmp, got) != 0) {
			int en = errno;
			inflateEnd(&z);
			return io_fail(e, en, "writing file", path);
		}
		if (rc == Z_OK && got == 0 && z.avail_in == 0) {
			inflateEnd(&z);
			return upload_fail(e, 400, "invalid gzip data: unexpected EOF");
		}
	}
	inflateEnd(&z);
	return 0;
}

/* Writes one file (truncating it) as the user; its entry goes to result. */
static int write_target(const struct files_req *f, const char *path, const uint8_t *data,
	size_t n, bool gzip, struct evkeyvalq *headers, cJSON *result, struct upload_error *e)
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
	if (fs_mkdir_all(f->root_fd, parent, f->user.uid, f->user.gid) != 0) {
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
	int rc = fchown(fd, f->user.uid, f->user.gid) != 0 ? io_fail(e, errno, "changing owner of", path) : 0;
	if (rc == 0) {
		if (gzip)
			rc = gunzip(data, n, fd, NULL, path, e);
		else if (write_all(fd, data, n) != 0)
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
	cJSON_AddStringToObject(entry, "name", base_name(path));
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
			if (write_target(f, target, data, (size_t)(next - data), false, headers, result, e) != 0)
				return -1;
		}
		p = next + dn;
	}
}

int files_post(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	(void)ctx;
	struct files_req f;
	int st = prelude(req, sb, "write", &f);
	if (st) {
		files_req_free(&f);
		return st;
	}
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	struct evbuffer *body = evhttp_request_get_input_buffer(req);
	struct upload_error e = {0, ""};
	cJSON *result = cJSON_CreateArray();
	const char *ctype = evhttp_find_header(in, "Content-Type");
	const char *cenc = evhttp_find_header(in, "Content-Encoding");
	bool gzip = cenc && strcasecmp(cenc, "gzip") == 0;
	size_t n = evbuffer_get_length(body);
	const uint8_t *data = n ? evbuffer_pullup(body, -1) : (const uint8_t *)"";
	struct evbuffer *inflated = NULL;
	size_t mlen = ctype ? strcspn(ctype, ";") : 0;
	while (mlen > 0 && (ctype[mlen - 1] == ' ' || ctype[mlen - 1] == '\t'))
		mlen--;
	if (!result || !data) {
		upload_fail(&e, 500, "out of memory");
	} else if (cenc && !gzip && strcasecmp(cenc, "identity") != 0) {
		upload_fail(&e, 400, "unsupported Content-Encoding '%.40s'", cenc);
	} else if (check_metadata(in, &e) != 0) {
		/* e is set */
	} else if (mlen == 24 && strncasecmp(ctype, "application/octet-stream", 24) == 0) {
		if (!f.has_path)
			upload_fail(&e, 400, "path is required for application/octet-stream uploads");
		else
			write_target(&f, f.path, data, n, gzip, in, result, &e);
	} else if (mlen == 19 && strncasecmp(ctype, "multipart/form-data", 19) == 0) {
		char boundary[200];
		if (!header_param(ctype, "boundary", boundary, sizeof boundary)) {
			upload_fail(&e, 400, "multipart upload without a boundary");
		} else {
			if (gzip && (inflated = evbuffer_new()) != NULL &&
			    gunzip(data, n, -1, inflated, f.path, &e) == 0) {
				n = evbuffer_get_length(inflated);
				data = n ? evbuffer_pullup(inflated, -1) : (const uint8_t *)"";
			}
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
