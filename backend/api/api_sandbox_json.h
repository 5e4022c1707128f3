/* The three JSON shapes E2B's API uses for a sandbox
 * (docs/e2b-protocol-notes.md, "Control plane"). */
#ifndef E2B_BACKEND_SANDBOX_JSON_H
#define E2B_BACKEND_SANDBOX_JSON_H

struct cJSON;
struct sandbox;

#define SANDBOX_ENVD_VERSION "0.6.13" /* envd of the infra snapshot the protocol sheet read */

/* "Sandbox": the answer to create, connect and resume. domain: --domain. */
struct cJSON *sandbox_json_created(const struct sandbox *sb, const char *domain);
/* "SandboxDetail": GET /sandboxes/{id}. */
struct cJSON *sandbox_json_detail(const struct sandbox *sb, const char *domain);
/* "ListedSandbox": one element of GET /v2/sandboxes. */
struct cJSON *sandbox_json_listed(const struct sandbox *sb);

#endif
