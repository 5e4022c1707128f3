/* Directory watching with inotify (docs/e2b-protocol-notes.md, "Filesystem
 * service"): the WatchDir server stream, and CreateWatcher / GetWatcherEvents /
 * RemoveWatcher, whose events queue up until drained.
 *
 * inotify event bits map to envd's (fsnotify's) types: IN_CREATE and
 * IN_MOVED_TO create, IN_MODIFY write, IN_DELETE and IN_DELETE_SELF remove,
 * IN_MOVED_FROM and IN_MOVE_SELF rename, IN_ATTRIB chmod; one inotify event
 * with several bits gives several messages. `name` is the path relative to the
 * watched directory. Recursive watches add every new subdirectory. The
 * directory is opened inside the sandbox root (fs_path.h) and watched through
 * its /proc/self/fd link, so the watch cannot leave the sandbox. */
#ifndef E2B_BACKEND_FS_WATCH_H
#define E2B_BACKEND_FS_WATCH_H

#include "envd/envd_routes.h"

#define FS_WATCH_QUEUE_MAX 10000        /* queued events per CreateWatcher watcher */
#define FS_WATCH_STREAM_HIGH_WATER (4 * 1024 * 1024)

struct fs_watchers;
struct registry_hooks;

struct fs_watchers *fs_watchers_new(struct event_base *base, struct registry *reg);
void fs_watchers_free(struct fs_watchers *w);
/* Registry hooks that cut a removed sandbox's WatchDir streams (the
 * connection drops, as E2B's proxy drops it) and free its watchers. */
void fs_watchers_hooks(struct fs_watchers *ws, struct registry_hooks *out);

int fs_watch_rpc_watch_dir(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_watch_rpc_create(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_watch_rpc_get_events(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_watch_rpc_remove(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

#endif
