/* multipart.c — the multipart/form-data body envd's POST /files takes from envd
 * versions before 0.5.7 (docs/e2b-protocol-notes.md, "Files"): one part, form
 * field `file`, `filename` = the target path (envd takes it whole, directories
 * kept). */
#include <string.h>

#include "multipart.h"

int e2bw_multipart_file(e2bw_buf *out, const char *boundary, const char *filename, const uint8_t *data,
	size_t len)
{
	if (e2bw_buf_reserve(out, len + strlen(filename) * 3 + 256) != 0)
		return -1;
	int rc = e2bw_buf_append_str(out, "--") || e2bw_buf_append_str(out, boundary) ||
		e2bw_buf_append_str(out, "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"");
	/* RFC 7578 §4.2: quote and backslash escaped; CR/LF would end the header line. */
	for (const char *p = filename; *p && !rc; p++) {
		if (*p == '"')
			rc = e2bw_buf_append_str(out, "%22");
		else if (*p == '\r')
			rc = e2bw_buf_append_str(out, "%0D");
		else if (*p == '\n')
			rc = e2bw_buf_append_str(out, "%0A");
		else
			rc = e2bw_buf_append_char(out, *p);
	}
	rc = rc || e2bw_buf_append_str(out, "\"\r\nContent-Type: application/octet-stream\r\n\r\n") ||
		e2bw_buf_append(out, data, len) || e2bw_buf_append_str(out, "\r\n--") ||
		e2bw_buf_append_str(out, boundary) || e2bw_buf_append_str(out, "--\r\n");
	return rc ? -1 : 0;
}
