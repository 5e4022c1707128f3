#include "ndjson.h"

#include <string.h>

void e2bw_ndjson_init(e2bw_ndjson *f, size_t max_line)
{
	memset(f, 0, sizeof *f);
	f->max_line = max_line;
}

static int is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

static void deliver(const char *line, size_t len, e2bw_ndjson_line_fn on_line, void *ctx)
{
	if (len && line[len - 1] == '\r')
		len--;
	if (is_blank(line, len))
		return;
	on_line(ctx, line, len);
}

/* Appends a piece of the current line, switching to discard mode when the
 * line outgrows the limit (or memory runs out). */
static int add_piece(e2bw_ndjson *f, const char *p, size_t n)
{
	if (f->dropped) {
		f->dropped += n;
		return 0;
	}
	if (f->partial.len + n > f->max_line) {
		f->dropped = f->partial.len + n;
		e2bw_buf_free(&f->partial);
		return 0;
	}
	if (e2bw_buf_append(&f->partial, p, n) != 0) {
		f->dropped = f->partial.len + n;
		e2bw_buf_free(&f->partial);
		return -1;
	}
	return 0;
}

static void end_line(e2bw_ndjson *f, e2bw_ndjson_line_fn on_line, void *ctx)
{
	if (f->dropped) {
		f->dropped = 0;
		on_line(ctx, NULL, 0);
		return;
	}
	deliver(f->partial.data ? f->partial.data : "", f->partial.len, on_line, ctx);
	e2bw_buf_reset(&f->partial);
}

int e2bw_ndjson_feed(e2bw_ndjson *f, const char *data, size_t len, e2bw_ndjson_line_fn on_line, void *ctx)
{
	int rc = 0;
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;
		if (nl && f->partial.len == 0 && !f->dropped && n <= f->max_line) {
			deliver(data, n, on_line, ctx); /* whole line inside this chunk: no copy */
		} else {
			if (add_piece(f, data, n) != 0)
				rc = -1;
			if (nl)
				end_line(f, on_line, ctx);
		}
		if (!nl)
			break;
		data += n + 1;
		len -= n + 1;
	}
	return rc;
}

void e2bw_ndjson_finish(e2bw_ndjson *f, e2bw_ndjson_line_fn on_line, void *ctx)
{
	if (f->dropped || f->partial.len)
		end_line(f, on_line, ctx);
}

void e2bw_ndjson_free(e2bw_ndjson *f)
{
	e2bw_buf_free(&f->partial);
}
