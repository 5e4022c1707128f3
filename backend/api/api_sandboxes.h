/* The control plane's sandbox routes (docs/e2b-protocol-notes.md, "Control
 * plane"): get, kill, timeout, refreshes, pause, resume and connect, v1 and v2, and
 * forks (create is api_create.h). Calls registry/, runtime/, net/, the
 * sandbox JSON shapes and http/. */
#ifndef E2B_BACKEND_API_SANDBOXES_H
#define E2B_BACKEND_API_SANDBOXES_H

#include "api/api_ctx.h"
#include "http/http_field.h"

#include <stddef.h>
#include <stdint.h>

struct sandbox;

int api_get(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_kill(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_set_timeout(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_refresh(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_pause(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_resume(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
/* lifecycle.autoResume: resumes a paused sandbox that has it, for the
 * timeout it was created with (at least 300 s), because a request reached
 * it (envd_ctx.wake; arg: the struct api_ctx *). 0 when it now runs. */
int api_sandboxes_wake(void *arg, struct sandbox *sb);
int api_connect_v1(struct api_ctx *ctx, struct evhttp_request *req, const char *id);
int api_connect_v2(struct api_ctx *ctx, struct evhttp_request *req, const char *id);

struct err;
struct cJSON;
/* A body's "timeout" in seconds: an int32, not negative, at most 24 hours
 * (E2B's message past that). */
enum field_result api_sandboxes_read_timeout(const struct cJSON *body, int64_t *out, struct err *err);
/* A fork of orig on the stack layer_ids (its layers with its sealed
 * writable layer on top): its settings (metadata, env vars, sizes, network,
 * volumes), running for timeout_s. NULL with err. */
struct sandbox *api_sandboxes_fork(struct api_ctx *ctx, const struct sandbox *orig,
	const char *const *layer_ids, size_t layer_count, int64_t timeout_s, struct err *err);
/* A fork just made (api_sandboxes_fork) given the processes and memory of
 * its source from image (registry_fork_image): its own processes end, then
 * it is resumed from the image (runtime_checkpoint_take), with its own
 * namespaces and address. 0 when it runs them; -1 with why (status 0) when
 * they could not be restored: it then runs with fresh processes on its
 * files; -2 with why (an HTTP status) when it could not start again at all:
 * it is removed. */
int api_sandboxes_fork_restore(struct api_ctx *ctx, struct sandbox *fork, const char *image,
	int64_t timeout_s, struct err *why);

#endif
