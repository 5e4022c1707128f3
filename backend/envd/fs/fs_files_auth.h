/* envd's check for the /files routes (docs/e2b-protocol-notes.md, "Files"): a
 * present X-Access-Token must equal the sandbox's token; otherwise a
 * `signature` query parameter is required, "v1_" + unpadded standard base64 of
 * sha256("<path>:<op>:<username>:<token>[:<signature_expiration>]"), and an
 * expiration in the past is refused. A sandbox without a token needs neither. */
#ifndef E2B_BACKEND_FILES_AUTH_H
#define E2B_BACKEND_FILES_AUTH_H

#include <stddef.h>

struct err;
struct http_head;
struct query;
struct registry;
struct sandbox;

/* 0 when allowed, else -1 with envd's reason in err (401). op is "read" or
 * "write". */
int files_auth_check(const struct sandbox *sb, const struct http_head *head, const struct query *q,
	const char *op, struct err *err);

/* For a signed /files URL that names no sandbox (the SDK's URL when one
 * sandbox_url serves every sandbox): the running sandbox whose token makes
 * the signature match (expiry is checked afterwards, so an expired URL still
 * gets envd's 401), or NULL. */
struct sandbox *files_auth_find_signer(const struct registry *reg, const struct http_head *head);

#endif
