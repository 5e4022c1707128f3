/* The NDJSON framer must give the same lines for every split of the input. */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "check.h"
#include "ndjson.h"
#include "suites.h"

typedef struct {
	e2bw_buf log;
} line_log;

static void on_line(void *ctx, const char *line, size_t len)
{
	line_log *l = ctx;
	if (!line)
		e2bw_buf_append_str(&l->log, "<OVERSIZED>");
	else
		e2bw_buf_append(&l->log, line, len);
	e2bw_buf_append_char(&l->log, '|');
}

static char *frame(const char *in, size_t len, size_t max, const size_t *splits, int nsplits, int finish)
{
	e2bw_ndjson f;
	line_log l = {{0}};
	e2bw_ndjson_init(&f, max);
	size_t pos = 0;
	for (int i = 0; i <= nsplits; i++) {
		size_t end = i < nsplits ? splits[i] : len;
		e2bw_ndjson_feed(&f, in + pos, end - pos, on_line, &l);
		pos = end;
	}
	if (finish)
		e2bw_ndjson_finish(&f, on_line, &l);
	e2bw_ndjson_free(&f);
	e2bw_buf_append_char(&l.log, 0);
	return l.log.data;
}

/* whole, byte by byte, and every single split point */
static void check_all_chunkings(const char *in, size_t max, int finish, const char *expected)
{
	size_t len = strlen(in);
	char *whole = frame(in, len, max, NULL, 0, finish);
	CHECK_STR(whole, expected);
	free(whole);
	size_t *every = malloc((len + 1) * sizeof *every);
	for (size_t i = 0; i < len; i++)
		every[i] = i;
	char *bytes = frame(in, len, max, every, (int)len, finish);
	CHECK_STR(bytes, expected);
	free(bytes);
	for (size_t s = 0; s <= len; s++) {
		size_t split[1] = {s};
		char *one = frame(in, len, max, split, 1, finish);
		CHECK_STR(one, expected);
		free(one);
	}
	free(every);
}

void suite_ndjson(void)
{
	check_all_chunkings("{\"a\":1}\n{\"b\":2}\n", 64, 0, "{\"a\":1}|{\"b\":2}|");
	check_all_chunkings("one\r\n\n   \ntwo\n", 64, 0, "one|two|"); /* CRLF, blank lines */
	check_all_chunkings("tail-without-newline", 64, 1, "tail-without-newline|");
	check_all_chunkings("tail-without-newline", 64, 0, ""); /* not delivered before the end */
	check_all_chunkings("short\n0123456789ABCDEF-too-long\nnext\n", 16, 0, "short|<OVERSIZED>|next|");
	check_all_chunkings("0123456789ABCDEF!", 16, 1, "<OVERSIZED>|");       /* oversized final line */
	check_all_chunkings("0123456789ABCDEF\n", 16, 0, "0123456789ABCDEF|"); /* exactly the limit is fine */
}
