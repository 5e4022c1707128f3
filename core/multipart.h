/* multipart.h — the multipart/form-data body envd's POST /files takes from
 * envd versions before 0.5.7: one part, form field `file`, `filename` = the
 * target path. Calls only buf.c. */
#ifndef E2BW_MULTIPART_H
#define E2BW_MULTIPART_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Appends a multipart/form-data body with one `file` part named `filename`. */
int e2bw_multipart_file(e2bw_buf *out, const char *boundary, const char *filename, const uint8_t *data,
	size_t len);

#endif
