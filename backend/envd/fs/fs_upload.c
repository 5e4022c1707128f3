/* Streaming a POST /files body to its files in slices (fs_upload.h). */
#include "envd/fs/fs_upload.h"

#include "envd/fs/fs_multipart.h"
#include "http/http_gate.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#define STEP_BYTES (64 * 1024) /* decoded per step of a slice */

struct fs_upload {
	struct http_gate *gate;
	struct event *slice_ev;
	struct fs_upload_sink sink;
	struct err err;
	bool started;
	bool gzip, z_ready, z_ended;
	z_stream z;
	uint8_t *zin;            /* compressed bytes inflate is working on */
	struct evbuffer *plain;  /* decoded, not yet written or parsed */
	struct fs_multipart *mp; /* NULL: the body is one file */
	int fd;                  /* the file being written; -1 none, or FS_UPLOAD_SKIP */
	char path[FS_PATH_MAX];
	uint64_t written, max_bytes;
	uint64_t file_written, file_room;
};

int fs_upload_io_fail(struct err *e, int en, const char *what, const char *path)
{
	if (en == ENOSPC || en == EDQUOT)
		return err_set(e, 507, "not enough disk space available");
	return err_set(e, 500, "error %s '%s': %s", what, path, strerror(en));
}

/* --- the files ----------------------------------------------------------------- */

static int begin_file(struct fs_upload *u, const char *disposition)
{
	u->path[0] = '\0';
	u->fd = u->sink.begin(u->sink.arg, disposition, u->path, &u->err);
	if (u->fd == -1)
		return -1;
	u->file_written = 0;
	u->file_room = UINT64_MAX;
	struct statvfs vfs;
	if (u->fd >= 0 && fstatvfs(u->fd, &vfs) == 0)
		u->file_room = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	return 0;
}

static int end_file(struct fs_upload *u)
{
	int fd = u->fd;
	u->fd = -1;
	return fd >= 0 ? u->sink.end(u->sink.arg, fd, &u->err) : 0;
}

/* n bytes of src to the file being written (or dropped for a skipped part). */
static int write_bytes(struct fs_upload *u, struct evbuffer *src, size_t n)
{
	if (u->written + n > u->max_bytes)
		return err_set(&u->err, 413, "upload larger than the limit of %llu bytes",
			(unsigned long long)u->max_bytes);
	u->written += n;
	if (u->fd < 0) {
		evbuffer_drain(src, n);
		return 0;
	}
	if (u->file_written + n > u->file_room)
		return err_set(&u->err, 507, "not enough disk space available");
	u->file_written += n;
	while (n > 0) {
		struct evbuffer_iovec seg;
		if (evbuffer_peek(src, (ev_ssize_t)n, NULL, &seg, 1) < 1)
			break;
		size_t len = seg.iov_len < n ? seg.iov_len : n;
		ssize_t w = write(u->fd, seg.iov_base, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return fs_upload_io_fail(&u->err, w < 0 ? errno : EIO, "writing file", u->path);
		evbuffer_drain(src, (size_t)w);
		n -= (size_t)w;
	}
	return 0;
}

static int on_part_begin(void *arg, const char *disposition)
{
	return begin_file(arg, disposition);
}

static int on_part_data(void *arg, struct evbuffer *data, size_t len)
{
	return write_bytes(arg, data, len);
}

static int on_part_end(void *arg)
{
	return end_file(arg);
}

/* --- decoding -------------------------------------------------------------------- */

/* Up to cap decoded bytes into plain. 1 when it moved anything, 0 when
 * nothing is there yet, -1 on bad gzip data. */
static int produce(struct fs_upload *u, size_t cap)
{
	struct evbuffer *body = http_gate_body(u->gate);
	if (!u->gzip || u->z_ended) {
		size_t n = evbuffer_get_length(body);
		if (n > cap)
			n = cap;
		if (n == 0)
			return 0;
		/* After a gzip stream's end, what follows is ignored (as zlib's
		 * single-member readers do). */
		if (u->z_ended)
			evbuffer_drain(body, n);
		else
			evbuffer_remove_buffer(body, u->plain, n);
		http_gate_body_taken(u->gate);
		return 1;
	}
	if (u->z.avail_in == 0) {
		int got = evbuffer_remove(body, u->zin, STEP_BYTES);
		if (got <= 0)
			return 0;
		http_gate_body_taken(u->gate);
		u->z.next_in = u->zin;
		u->z.avail_in = (uInt)got;
	}
	struct evbuffer_iovec out;
	if (evbuffer_reserve_space(u->plain, (ev_ssize_t)cap, &out, 1) < 1)
		return err_set(&u->err, 500, "out of memory");
	size_t room = out.iov_len < cap ? out.iov_len : cap;
	uInt in_before = u->z.avail_in;
	u->z.next_out = out.iov_base;
	u->z.avail_out = (uInt)room;
	int rc = inflate(&u->z, Z_NO_FLUSH);
	out.iov_len = room - u->z.avail_out;
	evbuffer_commit_space(u->plain, &out, 1);
	if (rc == Z_STREAM_END)
		u->z_ended = true;
	else if (rc != Z_OK && rc != Z_BUF_ERROR)
		return err_set(&u->err, 400, "invalid gzip data");
	return out.iov_len > 0 || u->z.avail_in != in_before || u->z_ended;
}

/* Decoded bytes to the file, or through the multipart parser. */
static int consume(struct fs_upload *u)
{
	if (!u->mp)
		return write_bytes(u, u->plain, evbuffer_get_length(u->plain));
	return fs_multipart_feed(u->mp, u->plain, &u->err) < 0 ? -1 : 0;
}

/* --- slices ---------------------------------------------------------------------- */

static void finish(struct fs_upload *u)
{
	if (u->err.status == 0) {
		if (u->mp) {
			fs_multipart_finish(u->mp, &u->err);
		} else {
			end_file(u);
		}
	}
	if (u->fd >= 0) {
		close(u->fd); /* an error cut it short */
		u->fd = -1;
	}
	http_gate_body_notify(u->gate, NULL, NULL);
	u->sink.done(u->sink.arg, &u->err); /* may free u */
}

static bool body_over(struct fs_upload *u)
{
	return http_gate_body_done(u->gate) && evbuffer_get_length(http_gate_body(u->gate)) == 0 &&
		(!u->gzip || u->z_ended || u->z.avail_in == 0);
}

static void slice(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fs_upload *u = arg;
	if (!u->started) {
		u->started = true;
		if (!u->mp && begin_file(u, "") != 0) {
			finish(u);
			return;
		}
	}
	size_t produced = 0;
	int rc = 0;
	while (produced < FS_UPLOAD_SLICE_BYTES) {
		size_t before = evbuffer_get_length(u->plain);
		rc = produce(u, STEP_BYTES);
		if (rc < 0)
			break;
		produced += evbuffer_get_length(u->plain) - before;
		if (consume(u) != 0) {
			rc = -1;
			break;
		}
		if (rc == 0)
			break;
	}
	int framing = http_gate_body_error(u->gate);
	if (rc == 0 && framing)
		rc = framing == 413 ? err_set(&u->err, 413, "request body too large")
				    : err_set(&u->err, 400, "invalid request body");
	if (rc < 0) {
		finish(u);
	} else if (body_over(u)) {
		if (u->gzip && !u->z_ended)
			err_set(&u->err, 400, "invalid gzip data: unexpected EOF");
		finish(u);
	} else if (produced >= FS_UPLOAD_SLICE_BYTES) {
		/* More after every other client's turn: a zero timer, not
		 * event_active (which would run it again before any I/O). */
		static const struct timeval zero = {0, 0};
		evtimer_add(u->slice_ev, &zero);
	}
	/* Otherwise the gate calls again when more of the body has come. */
}

static void on_body_news(void *arg)
{
	struct fs_upload *u = arg;
	event_active(u->slice_ev, EV_TIMEOUT, 1);
}

struct fs_upload *fs_upload_start(struct event_base *base, struct http_gate *gate, bool gzip,
	const char *boundary, uint64_t max_bytes, const struct fs_upload_sink *sink)
{
	struct fs_upload *u = calloc(1, sizeof *u);
	if (!u)
		return NULL;
	u->gate = gate;
	u->sink = *sink;
	u->fd = -1;
	u->gzip = gzip;
	u->max_bytes = max_bytes;
	struct fs_multipart_events ev = {.part_begin = on_part_begin,
		.part_data = on_part_data,
		.part_end = on_part_end,
		.arg = u};
	u->plain = evbuffer_new();
	u->slice_ev = event_new(base, -1, 0, slice, u);
	bool ok = u->plain && u->slice_ev && (!boundary || (u->mp = fs_multipart_new(boundary, &ev)));
	if (ok && gzip) {
		u->zin = malloc(STEP_BYTES);
		u->z_ready = u->zin && inflateInit2(&u->z, 15 + 16) == Z_OK;
		ok = u->z_ready;
	}
	if (!ok) {
		fs_upload_free(u);
		return NULL;
	}
	http_gate_body_notify(gate, on_body_news, u);
	return u;
}

void fs_upload_free(struct fs_upload *u)
{
	if (!u)
		return;
	if (u->fd >= 0)
		close(u->fd);
	if (u->z_ready)
		inflateEnd(&u->z);
	free(u->zin);
	fs_multipart_free(u->mp);
	if (u->plain)
		evbuffer_free(u->plain);
	if (u->slice_ev)
		event_free(u->slice_ev);
	free(u);
}
