/* What envd's /init gives a sandbox on E2B, for the servers a template's
 * start command runs: E2B's code interpreter asks envd (GET /envs, with the
 * X-Access-Token its client sent) for the sandbox's environment variables,
 * and envd checks the token there. This backend has no envd inside the
 * sandbox; it writes both into it instead, at /run/e2b/envd.json, root's
 * only: {"envVars": {...}, "accessTokenSha256": "<hex>"} (no hash for a
 * sandbox that is not secure). The token itself never enters the sandbox.
 * Calls runtime/ (its root, its ids) and lib/. */
#ifndef E2B_BACKEND_TEMPLATES_ENVD_FILE_H
#define E2B_BACKEND_TEMPLATES_ENVD_FILE_H

#include <stddef.h>

struct err;
struct sandbox;

#define TEMPLATES_ENVD_FILE_DIR "/run/e2b"
#define TEMPLATES_ENVD_FILE_NAME "envd.json"

/* Writes (atomically replaces) the file for sb's environment and token.
 * 0, or -1 with err. Isolated sandboxes only. */
int templates_envd_file_write(const struct sandbox *sb, struct err *err);

#endif
