/* Streaming multipart/form-data (fs_multipart.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_multipart.h"

#include "lib/err.h"

#include <event2/buffer.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PART_HEADERS_MAX (16 * 1024)

enum mp_state {
	MP_START,
	MP_AFTER_DELIM,
	MP_HEADERS,
	MP_DATA,
	MP_END
};

struct fs_multipart {
	enum mp_state state;
	struct fs_multipart_events ev;
	char delim[200]; /* "\r\n--<boundary>" */
	size_t dn;
	bool in_preamble; /* the body did not open with a delimiter */
};

struct fs_multipart *fs_multipart_new(const char *boundary, const struct fs_multipart_events *ev)
{
	struct fs_multipart *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	int n = snprintf(m->delim, sizeof m->delim, "\r\n--%s", boundary);
	if (!boundary[0] || n < 0 || (size_t)n >= sizeof m->delim) {
		free(m);
		return NULL;
	}
	m->dn = (size_t)n;
	m->ev = *ev;
	return m;
}

void fs_multipart_free(struct fs_multipart *m)
{
	free(m);
}

static int malformed(struct err *err, const char *what)
{
	err_set(err, 400, "%s", what);
	return -2;
}

/* The Content-Disposition value among a part's header lines. */
static void find_disposition(const char *headers, char *out, size_t cap)
{
	out[0] = '\0';
	for (const char *line = headers; *line;) {
		size_t ll = strcspn(line, "\r\n");
		if (ll > 20 && strncasecmp(line, "Content-Disposition:", 20) == 0)
			snprintf(out, cap, "%.*s", (int)(ll - 20), line + 20);
		line += ll;
		line += strspn(line, "\r\n");
	}
}

/* One step; 1 when it made progress, 0 when it needs more bytes. */
static int step(struct fs_multipart *m, struct evbuffer *in, struct err *err)
{
	size_t len = evbuffer_get_length(in);
	switch (m->state) {
	case MP_START: {
		/* The first delimiter may open the body without its CRLF. */
		if (len < m->dn)
			return 0;
		char head[sizeof m->delim];
		evbuffer_copyout(in, head, m->dn - 2);
		if (!m->in_preamble && memcmp(head, m->delim + 2, m->dn - 2) == 0) {
			evbuffer_drain(in, m->dn - 2);
			m->state = MP_AFTER_DELIM;
			return 1;
		}
		m->in_preamble = true;
		struct evbuffer_ptr at = evbuffer_search(in, m->delim, m->dn, NULL);
		if (at.pos < 0) { /* preamble: keep what could start a delimiter */
			evbuffer_drain(in, len - (m->dn - 1));
			return 0;
		}
		evbuffer_drain(in, (size_t)at.pos + m->dn);
		m->state = MP_AFTER_DELIM;
		return 1;
	}
	case MP_AFTER_DELIM: {
		unsigned char c[2];
		size_t pad = 0;
		for (; pad < len && pad <= 256; pad++) {
			struct evbuffer_ptr at;
			evbuffer_ptr_set(in, &at, pad, EVBUFFER_PTR_SET);
			evbuffer_copyout_from(in, &at, c, 1);
			if (c[0] != ' ' && c[0] != '\t')
				break;
		}
		if (len - pad < 2)
			return pad > 256 ? malformed(err, "malformed multipart body") : 0;
		evbuffer_drain(in, pad);
		evbuffer_copyout(in, c, 2);
		if (pad == 0 && c[0] == '-' && c[1] == '-') {
			m->state = MP_END;
			return 1;
		}
		if (c[0] != '\r' || c[1] != '\n')
			return malformed(err, "malformed multipart body");
		evbuffer_drain(in, 2);
		m->state = MP_HEADERS;
		return 1;
	}
	case MP_HEADERS: {
		char disposition[4096 + 256];
		if (len >= 2) {
			unsigned char c[2];
			evbuffer_copyout(in, c, 2);
			if (c[0] == '\r' && c[1] == '\n') { /* a part without headers */
				evbuffer_drain(in, 2);
				m->state = MP_DATA;
				return m->ev.part_begin(m->ev.arg, "") == 0 ? 1 : -1;
			}
		}
		struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
		if (end.pos < 0)
			return len > PART_HEADERS_MAX ? malformed(err, "malformed multipart part headers")
						      : 0;
		if ((size_t)end.pos > PART_HEADERS_MAX)
			return malformed(err, "malformed multipart part headers");
		char *text = malloc((size_t)end.pos + 3);
		if (!text)
			return malformed(err, "out of memory");
		evbuffer_remove(in, text, (size_t)end.pos + 2);
		text[end.pos + 2] = '\0';
		evbuffer_drain(in, 2);
		find_disposition(text, disposition, sizeof disposition);
		free(text);
		m->state = MP_DATA;
		return m->ev.part_begin(m->ev.arg, disposition) == 0 ? 1 : -1;
	}
	case MP_DATA: {
		struct evbuffer_ptr at = evbuffer_search(in, m->delim, m->dn, NULL);
		if (at.pos < 0) {
			/* All but what could be the start of the delimiter. */
			size_t n = len > m->dn - 1 ? len - (m->dn - 1) : 0;
			if (n == 0)
				return 0;
			return m->ev.part_data(m->ev.arg, in, n) == 0 ? 0 : -1;
		}
		if (at.pos > 0 && m->ev.part_data(m->ev.arg, in, (size_t)at.pos) != 0)
			return -1;
		evbuffer_drain(in, m->dn);
		m->state = MP_AFTER_DELIM;
		return m->ev.part_end(m->ev.arg) == 0 ? 1 : -1;
	}
	default: /* MP_END: the epilogue is ignored */
		evbuffer_drain(in, len);
		return 0;
	}
}

int fs_multipart_feed(struct fs_multipart *m, struct evbuffer *in, struct err *err)
{
	for (;;) {
		int rc = step(m, in, err);
		if (rc <= 0)
			return rc;
	}
}

int fs_multipart_finish(struct fs_multipart *m, struct err *err)
{
	if (m->state == MP_END)
		return 0;
	if (m->state == MP_DATA || m->state == MP_HEADERS)
		return malformed(err,
			m->state == MP_DATA ? "malformed multipart body: missing closing boundary"
					    : "malformed multipart part headers");
	return malformed(err, "malformed multipart body");
}
