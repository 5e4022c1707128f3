/* What the handlers of envd/fs/ are given: the parts of the backend they
 * reach, set once by the program (serving.c) within envd's context, which
 * envd's router (envd_routes.c) hands them with the running sandbox a
 * request is for. */
#ifndef E2B_BACKEND_FS_CTX_H
#define E2B_BACKEND_FS_CTX_H

#include <stdint.h>

struct event_base;
struct evhttp_request;
struct fs_watchers;
struct registry;
struct sandbox;

struct fs_ctx {
	struct registry *reg;
	struct event_base *base;
	struct fs_watchers *watchers; /* fs_watch.h */
	uint64_t max_upload_bytes;    /* one POST /files body, inflated or not (--max-upload-mb) */
};

/* A handler answers (or starts streaming) and returns the status it sent,
 * or FS_STATUS_PENDING when it answers later (and logs the request then). */
#define FS_STATUS_PENDING 0
typedef int (*fs_handler)(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
