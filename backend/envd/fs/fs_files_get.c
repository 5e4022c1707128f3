/* GET /files: the file streamed with backpressure, one byte range, gzip
 * when asked (see fs_files_get.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_files_get.h"

#include "envd/fs/fs_files.h"
#include "http/http_conns.h"
#include "http/http_reply.h"

#include <ctype.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

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
	struct event *again; /* the next step, when one used up its budget */
	int fd;
	uint64_t pos, remaining;
	bool gzip;
	z_stream z;
	uint8_t *in;
	struct evbuffer *out;
};

static void send_free(struct file_send *s)
{
	if (s->again)
		event_free(s->again);
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
	http_conn_gone_free_request(s->req);
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

static int64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void on_again(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump(arg);
}

/* Sends pieces while the connection has room; finishes at the end. One
 * step reads at most FILES_STEP_INPUT bytes and takes at most
 * FILES_STEP_US: gzip turns a sparse file's zeros into almost nothing, so
 * the output alone would let one step deflate gigabytes. */
static void pump(struct file_send *s)
{
	struct evbuffer *conn_out = bufferevent_get_output(evhttp_connection_get_bufferevent(s->evcon));
	size_t budget = FILES_STEP_INPUT;
	int64_t until = now_us() + FILES_STEP_US;
	while (evbuffer_get_length(conn_out) < FILES_HIGH_WATER) {
		if (budget == 0 || now_us() >= until) {
			/* Room is left, time is not: the next step after every other
			 * client's turn (a zero timer; event_active would run it again
			 * before any I/O). */
			static const struct timeval zero = {0, 0};
			evtimer_add(s->again, &zero);
			return;
		}
		bool done = s->remaining == 0;
		if (!done) {
			size_t want =
				s->remaining < FILES_READ_CHUNK ? (size_t)s->remaining : FILES_READ_CHUNK;
			ssize_t got = pread(s->fd, s->in, want, (off_t)s->pos);
			if (got <= 0) {
				/* The file shrank or failed under us: the body is cut short,
				 * so drop the connection rather than end it cleanly. */
				http_conn_set_closecb(s->evcon, NULL, NULL);
				evhttp_request_free(s->req);
				send_free(s);
				return;
			}
			s->pos += (uint64_t)got;
			s->remaining -= (uint64_t)got;
			budget -= (size_t)got < budget ? (size_t)got : budget;
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
			http_conn_set_closecb(s->evcon, NULL, NULL);
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

int files_get(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	struct files_req f;
	int st = files_prelude(req, sb, "read", &f);
	if (st)
		return st;
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
	add_disposition(out, files_base_name(f.path));
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
		snprintf(num, sizeof num, "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, start, start + len - 1,
			size);
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
		!(s->again = event_new(ctx->base, -1, 0, on_again, s)) ||
		(enc &&
			deflateInit2(&s->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
				Z_OK)) {
		if (s) {
			free(s->in);
			if (s->out)
				evbuffer_free(s->out);
			if (s->again)
				event_free(s->again);
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
	http_conn_set_closecb(s->evcon, on_send_closed, s);
	pump(s);
	return status;
}
