/* The CreateWatcher family (docs/e2b-protocol-notes.md, "Filesystem
 * service"): a watcher whose events queue up until GetWatcherEvents drains
 * them, at most FS_WATCH_QUEUE_MAX per watcher and FS_WATCH_SANDBOX_EVENTS_MAX
 * per sandbox; a watcher at either bound is dropped, and its next
 * GetWatcherEvents answers resource_exhausted saying so. */
#ifndef E2B_BACKEND_FS_WATCH_QUEUE_H
#define E2B_BACKEND_FS_WATCH_QUEUE_H

#include "envd/fs/fs_ctx.h"

int fs_watch_rpc_create(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_watch_rpc_get_events(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_watch_rpc_remove(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
