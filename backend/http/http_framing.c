/* Decoding a request body's framing piece by piece (http_framing.h). */
#include "http/http_framing.h"

#include <event2/buffer.h>
#include <string.h>

#define LINE_MAX_BYTES 1024 /* a chunk-size line (with extensions) */
#define TRAILER_MAX_BYTES (8 * 1024)

enum {
	CHUNK_SIZE,
	CHUNK_DATA,
	CHUNK_DATA_END,
	CHUNK_TRAILER
};

void http_framing_init(struct http_framing *f, enum http_framing_kind kind, uint64_t length)
{
	memset(f, 0, sizeof *f);
	f->kind = kind;
	f->length = length;
	f->left = kind == HTTP_FRAMING_LENGTH ? length : 0;
	f->state = CHUNK_SIZE;
	f->done = kind == HTTP_FRAMING_NONE || (kind == HTTP_FRAMING_LENGTH && length == 0);
}

static int fail(struct http_framing *f)
{
	f->failed = true;
	return -1;
}

/* Moves n bytes of framing (not body) from src to out when raw, else drops them. */
static void pass_framing(struct evbuffer *src, struct evbuffer *out, size_t n, bool raw)
{
	if (raw && out)
		evbuffer_remove_buffer(src, out, n);
	else
		evbuffer_drain(src, n);
}

/* Body bytes: at most left, max and what src holds. */
static size_t pass_body(struct http_framing *f, struct evbuffer *src, struct evbuffer *out, size_t *max)
{
	size_t n = evbuffer_get_length(src);
	if ((uint64_t)n > f->left)
		n = (size_t)f->left;
	if (n > *max)
		n = *max;
	if (out)
		evbuffer_remove_buffer(src, out, n);
	else
		evbuffer_drain(src, n);
	f->left -= n;
	f->decoded += n;
	*max -= n;
	return n;
}

/* One line of src into line (without its end): its length, -2 when not all
 * there yet, -1 when too long. *total gets the bytes it takes with its end. */
static long read_line(struct evbuffer *src, char *line, size_t cap, size_t *total)
{
	size_t eol_len = 0;
	struct evbuffer_ptr eol = evbuffer_search_eol(src, NULL, &eol_len, EVBUFFER_EOL_CRLF);
	if (eol.pos < 0)
		return evbuffer_get_length(src) > cap ? -1 : -2;
	if ((size_t)eol.pos >= cap)
		return -1;
	evbuffer_copyout(src, line, (size_t)eol.pos);
	line[eol.pos] = '\0';
	*total = (size_t)eol.pos + eol_len;
	return (long)eol.pos;
}

/* "1a2b[;ext]" as a chunk size; -1 when malformed. */
static int parse_chunk_size(const char *line, uint64_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;
	for (; *line; line++, digits++) {
		int d;
		if (*line >= '0' && *line <= '9')
			d = *line - '0';
		else if (*line >= 'a' && *line <= 'f')
			d = *line - 'a' + 10;
		else if (*line >= 'A' && *line <= 'F')
			d = *line - 'A' + 10;
		else
			break;
		if (digits == 15)
			return -1; /* over 2^60: no real body is that large */
		v = v << 4 | (uint64_t)d;
	}
	while (*line == ' ' || *line == '\t')
		line++;
	if (digits == 0 || (*line && *line != ';'))
		return -1;
	*out = v;
	return 0;
}

static int take_chunked(struct http_framing *f, struct evbuffer *src, struct evbuffer *out, size_t max,
	bool raw)
{
	char line[LINE_MAX_BYTES];
	size_t total;
	while (!f->done && evbuffer_get_length(src) > 0) {
		switch (f->state) {
		case CHUNK_SIZE: {
			long n = read_line(src, line, sizeof line, &total);
			if (n == -2)
				return 0;
			uint64_t size;
			if (n < 0 || parse_chunk_size(line, &size) != 0)
				return fail(f);
			pass_framing(src, out, total, raw);
			f->left = size;
			f->state = size ? CHUNK_DATA : CHUNK_TRAILER;
			break;
		}
		case CHUNK_DATA:
			if (max == 0)
				return 0;
			pass_body(f, src, out, &max);
			if (f->left == 0)
				f->state = CHUNK_DATA_END;
			break;
		case CHUNK_DATA_END: {
			unsigned char end[2];
			size_t have = evbuffer_copyout(src, end, 2) > 1 ? 2 : 1;
			if (end[0] == '\n') {
				pass_framing(src, out, 1, raw);
			} else if (end[0] != '\r' || (have == 2 && end[1] != '\n')) {
				return fail(f);
			} else if (have == 1) {
				return 0;
			} else {
				pass_framing(src, out, 2, raw);
			}
			f->state = CHUNK_SIZE;
			break;
		}
		default: { /* CHUNK_TRAILER: header lines up to an empty one */
			long n = read_line(src, line, sizeof line, &total);
			if (n == -2)
				return 0;
			f->trailer_bytes += total;
			if (n < 0 || f->trailer_bytes > TRAILER_MAX_BYTES)
				return fail(f);
			pass_framing(src, out, total, raw);
			f->done = n == 0;
			break;
		}
		}
	}
	return 0;
}

int http_framing_take(struct http_framing *f, struct evbuffer *src, struct evbuffer *out, size_t max,
	bool raw)
{
	if (f->failed)
		return -1;
	if (f->done)
		return 0;
	if (f->kind == HTTP_FRAMING_CHUNKED)
		return take_chunked(f, src, out, max, raw);
	pass_body(f, src, out, &max);
	f->done = f->left == 0;
	return 0;
}
