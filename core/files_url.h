/* files_url.h — URLs handed to clients that cannot send headers: files.url
 * (a signed /files link) and ports.url. Calls files.c, envd.c, sha256.c and
 * the codecs. */
#ifndef E2BW_FILES_URL_H
#define E2BW_FILES_URL_H

#include <stdint.h>

#include "buf.h"
#include "calls.h"
#include "core_state.h"

void e2bw_files_url(e2bw_core *core, e2bw_call *call);
void e2bw_ports_url(e2bw_core *core, e2bw_call *call);
/* envd's signature: "v1_" + base64 (no padding) of sha256 of
 * "<path>:<operation>:<user>:<token>[:<expiration>]" (expiration < 0: none). */
int e2bw_files_signature(e2bw_buf *out, const char *path, const char *operation, const char *user,
	const char *token, long long expiration);
/* RFC 3339 UTC ("2026-01-02T03:04:05Z") of unix seconds. */
void e2bw_rfc3339(char out[32], long long unix_seconds);

#endif
