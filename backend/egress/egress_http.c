/* The request stream of egress_http.h: heads gathered (bounded) and handed
 * to egress_http_head.c whole; bodies, chunk framing and trailers checked
 * byte by byte and emitted as spans of the caller's input, never copied. */
#include "egress/egress_http.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress/egress_http_head.h"
#include "lib/err.h"

#define HEAD_KEEP 8192      /* a head buffer larger than this is let go after its head */
#define CHUNK_LINE_MAX 4096 /* a chunk-size line with its extensions */

enum state {
	S_HEAD,       /* gathering a head */
	S_LENGTH,     /* Content-Length body bytes */
	S_CHUNK_SIZE, /* hex digits */
	S_CHUNK_EXT,  /* after them: BWS, then ";" extensions, to CR */
	S_CHUNK_SIZE_LF,
	S_CHUNK_DATA,
	S_CHUNK_DATA_CR,
	S_CHUNK_DATA_LF,
	S_TRAILER_START, /* a trailer line, or the blank line that ends the body */
	S_TRAILER_NAME,
	S_TRAILER_VALUE,
	S_TRAILER_LF,
	S_END_LF,
	S_PASS,
};

struct egress_http {
	egress_http_headers_fn headers;
	egress_http_emit_fn emit;
	void *ctx;
	enum state state;
	enum egress_http_status status;
	bool passthrough;
	/* the head being gathered */
	unsigned char *head;
	size_t head_len, head_cap, line_start;
	unsigned lines;
	bool cr, lead_cr;
	/* the body */
	uint64_t left;     /* bytes of the body or of the chunk */
	size_t chunk_line; /* bytes of the chunk-size line so far */
	bool digits, in_ext;
	unsigned trailers;
	size_t trailer_bytes;
	struct err err; /* once status is not OK: what went wrong */
};

struct egress_http *egress_http_new(egress_http_headers_fn headers, egress_http_emit_fn emit, void *ctx)
{
	struct egress_http *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	h->headers = headers;
	h->emit = emit;
	h->ctx = ctx;
	return h;
}

void egress_http_free(struct egress_http *h)
{
	if (!h)
		return;
	free(h->head);
	free(h);
}

bool egress_http_passthrough(const struct egress_http *h)
{
	return h->passthrough;
}

static enum egress_http_status fail(struct egress_http *h, enum egress_http_status st, const char *why)
{
	err_set(&h->err, 0, "%s", why);
	h->status = st;
	return st;
}

static void emit(struct egress_http *h, const unsigned char *p, size_t n)
{
	if (n)
		h->emit(h->ctx, p, n);
}

static bool append(struct egress_http *h, unsigned char ch)
{
	if (h->head_len == h->head_cap) {
		size_t cap = h->head_cap ? h->head_cap * 2 : 1024;
		unsigned char *grown = realloc(h->head, cap);
		if (!grown)
			return false;
		h->head = grown;
		h->head_cap = cap;
	}
	h->head[h->head_len++] = ch;
	return true;
}

/* Gathers head bytes from p[*at..len): 1 once the blank line came, 0 for
 * more, -1 failed. Lines end in CRLF, nothing else. */
static int gather(struct egress_http *h, const unsigned char *p, size_t len, size_t *at)
{
	while (*at < len) {
		unsigned char ch = p[(*at)++];
		if (h->head_len == 0 && !h->cr) { /* CRLFs before a request line are dropped */
			if (h->lead_cr) {
				if (ch != '\n')
					return fail(h, EGRESS_HTTP_BAD, "a CR is not followed by LF"), -1;
				h->lead_cr = false;
				continue;
			}
			if (ch == '\r') {
				h->lead_cr = true;
				continue;
			}
		}
		if (h->head_len == EGRESS_HTTP_HEAD_MAX)
			return fail(h, EGRESS_HTTP_BAD, "the request head is over 64 KiB"), -1;
		if (!append(h, ch))
			return fail(h, EGRESS_HTTP_BAD, "out of memory"), -1;
		if (h->cr) {
			if (ch != '\n')
				return fail(h, EGRESS_HTTP_BAD, "a CR is not followed by LF"), -1;
			h->cr = false;
			if (h->head_len - 2 == h->line_start)
				return 1;
			if (++h->lines > 1 + EGRESS_HTTP_HEADERS_MAX)
				return fail(h, EGRESS_HTTP_BAD, "the request has more than 100 headers"), -1;
			h->line_start = h->head_len;
		} else if (ch == '\n') {
			return fail(h, EGRESS_HTTP_BAD, "a line ends in LF without CR"), -1;
		} else if (ch == '\r') {
			h->cr = true;
		}
	}
	return 0;
}

/* The gathered head, rewritten and emitted; the body's state set. */
static enum egress_http_status head_done(struct egress_http *h)
{
	struct egress_http_framing framing;
	unsigned char *out = NULL;
	size_t out_len = 0;
	enum egress_http_status st = egress_http_head_rewrite(h->head, h->head_len, h->headers, h->ctx,
		&framing, &out, &out_len, &h->err);
	if (st != EGRESS_HTTP_OK) {
		h->status = st;
		return st;
	}
	emit(h, out, out_len);
	free(out);
	h->head_len = h->line_start = 0;
	h->lines = 0;
	if (h->head_cap > HEAD_KEEP) {
		free(h->head);
		h->head = NULL;
		h->head_cap = 0;
	}
	if (framing.passthrough) {
		h->passthrough = true;
		h->state = S_PASS;
	} else if (framing.chunked) {
		h->state = S_CHUNK_SIZE;
		h->chunk_line = 0;
		h->digits = h->in_ext = false;
		h->left = 0;
	} else if (framing.length) {
		h->state = S_LENGTH;
		h->left = framing.length;
	} else {
		h->state = S_HEAD;
	}
	return EGRESS_HTTP_OK;
}

static int hex(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* One byte of chunk framing or trailers: 0, or -1 with why it is wrong in
 * err. */
static int framing_byte(struct egress_http *h, unsigned char ch, struct err *err)
{
	switch (h->state) {
	case S_CHUNK_SIZE:
	case S_CHUNK_EXT:
		if (++h->chunk_line > CHUNK_LINE_MAX)
			return err_set(err, 0, "a chunk-size line is too long");
		if (h->state == S_CHUNK_SIZE && hex(ch) >= 0) {
			h->left = h->left * 16 + (uint64_t)hex(ch);
			h->digits = true;
			if (h->left > EGRESS_HTTP_LENGTH_MAX)
				return err_set(err, 0, "a chunk is over 2^53 bytes");
			return 0;
		}
		if (!h->digits)
			return err_set(err, 0, "a chunk-size is not hexadecimal");
		h->state = S_CHUNK_EXT;
		if (ch == '\n')
			return err_set(err, 0, "a chunk-size line does not end in CRLF");
		if (ch == '\r') {
			h->state = S_CHUNK_SIZE_LF;
		} else if (ch == ';') {
			h->in_ext = true;
		} else if (h->in_ext ? !(ch == '\t' || (ch >= 0x20 && ch != 0x7f))
				     : !(ch == ' ' || ch == '\t')) {
			return err_set(err, 0, "a chunk extension is malformed");
		}
		return 0;
	case S_CHUNK_SIZE_LF:
		if (ch != '\n')
			return err_set(err, 0, "a chunk-size line does not end in CRLF");
		h->state = h->left ? S_CHUNK_DATA : S_TRAILER_START;
		h->trailers = 0;
		h->trailer_bytes = 0;
		return 0;
	case S_CHUNK_DATA_CR:
		h->state = S_CHUNK_DATA_LF;
		return ch == '\r' ? 0 : err_set(err, 0, "a chunk's data does not end in CRLF");
	case S_CHUNK_DATA_LF:
		h->state = S_CHUNK_SIZE;
		h->chunk_line = 0;
		h->digits = h->in_ext = false;
		return ch == '\n' ? 0 : err_set(err, 0, "a chunk's data does not end in CRLF");
	default:
		break;
	}
	if (++h->trailer_bytes > EGRESS_HTTP_HEAD_MAX)
		return err_set(err, 0, "the trailers are over 64 KiB");
	switch (h->state) {
	case S_TRAILER_START:
		if (ch == '\r') {
			h->state = S_END_LF;
			return 0;
		}
		if (ch == ' ' || ch == '\t')
			return err_set(err, 0, "a trailer line is folded (obs-fold)");
		if (!egress_http_head_tchar(ch))
			return err_set(err, 0, "a trailer line has no name");
		if (++h->trailers > EGRESS_HTTP_HEADERS_MAX)
			return err_set(err, 0, "the request has more than 100 trailers");
		h->state = S_TRAILER_NAME;
		return 0;
	case S_TRAILER_NAME:
		if (ch == ':')
			h->state = S_TRAILER_VALUE;
		else if (!egress_http_head_tchar(ch))
			return err_set(err, 0,
				"a trailer name is not a token, or a space comes before its colon");
		return 0;
	case S_TRAILER_VALUE:
		if (ch == '\r')
			h->state = S_TRAILER_LF;
		else if (!(ch == '\t' || (ch >= 0x20 && ch != 0x7f)))
			return err_set(err, 0, "a trailer value holds a control byte");
		return 0;
	case S_TRAILER_LF:
		h->state = S_TRAILER_START;
		return ch == '\n' ? 0 : err_set(err, 0, "a trailer line does not end in CRLF");
	case S_END_LF:
		h->state = S_HEAD;
		return ch == '\n' ? 0 : err_set(err, 0, "the trailers do not end in CRLF");
	default:
		return err_set(err, 0, "internal: no such state");
	}
}

enum egress_http_status egress_http_feed(struct egress_http *h, const void *bytes, size_t len,
	struct err *err)
{
	const unsigned char *p = bytes;
	size_t at = 0, span = 0;                          /* p[span..at) is body to emit as it came */
	while (h->status == EGRESS_HTTP_OK && at < len) { /* (bytes may be NULL when len is 0) */
		switch (h->state) {
		case S_PASS:
			at = len;
			break;
		case S_HEAD: {
			emit(h, p + span, at - span);
			int rc = gather(h, p, len, &at);
			span = at;
			if (rc == 1)
				head_done(h);
			break;
		}
		case S_LENGTH:
		case S_CHUNK_DATA: {
			uint64_t n = len - at < h->left ? len - at : h->left;
			at += (size_t)n;
			h->left -= n;
			if (h->left == 0)
				h->state = h->state == S_LENGTH ? S_HEAD : S_CHUNK_DATA_CR;
			break;
		}
		default: {
			if (framing_byte(h, p[at], &h->err) != 0) {
				emit(h, p + span, at - span);
				span = at;
				h->status = EGRESS_HTTP_BAD;
			} else {
				at++;
			}
		}
		}
	}
	if (h->status == EGRESS_HTTP_OK && at > span)
		emit(h, p + span, at - span);
	if (err && h->status != EGRESS_HTTP_OK)
		*err = h->err;
	return h->status;
}
