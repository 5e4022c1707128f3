/* ndjson.h — frames an NDJSON byte stream (EPP/1 over stdio) into lines.
 * Bytes may be split anywhere. A line longer than `max_line` is never
 * buffered whole: the framer drops its bytes and reports it once, at its
 * newline, as oversized. Empty and whitespace-only lines are skipped; a
 * trailing '\r' is dropped. */
#ifndef E2BW_NDJSON_H
#define E2BW_NDJSON_H

#include <stddef.h>

#include "buf.h"

typedef struct e2bw_ndjson {
	e2bw_buf partial; /* bytes of the current, unfinished line */
	size_t max_line;
	size_t dropped; /* > 0 while discarding an oversized line */
} e2bw_ndjson;

/* on_line(ctx, line, len) gets each complete line; len == 0 with line ==
 * NULL means "an oversized line was dropped". Returns 0, or -1 when out of
 * memory (the current line is then dropped and reported as oversized). */
typedef void (*e2bw_ndjson_line_fn)(void *ctx, const char *line, size_t len);

void e2bw_ndjson_init(e2bw_ndjson *f, size_t max_line);
int e2bw_ndjson_feed(e2bw_ndjson *f, const char *data, size_t len, e2bw_ndjson_line_fn on_line, void *ctx);
/* End of input: a final line without '\n' is delivered. */
void e2bw_ndjson_finish(e2bw_ndjson *f, e2bw_ndjson_line_fn on_line, void *ctx);
void e2bw_ndjson_free(e2bw_ndjson *f);

#endif
