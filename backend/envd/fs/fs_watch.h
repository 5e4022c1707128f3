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
 * its /proc/self/fd link, so the watch cannot leave the sandbox.
 *
 * Bounds (docs/backend/threat-model.md): directories are watched in slices
 * (fs_watch_dirs.h), at most --max-watches per sandbox, all its watchers
 * together; a watcher at a limit (that one, the kernel's, or its unread
 * events) ends with resource_exhausted, never goes on silently. */
#ifndef E2B_BACKEND_FS_WATCH_H
#define E2B_BACKEND_FS_WATCH_H

#include "envd/fs/fs_ctx.h"

#include <stdbool.h>
#include <stddef.h>

#define FS_WATCH_QUEUE_MAX 10000          /* unread events per CreateWatcher watcher */
#define FS_WATCH_SANDBOX_EVENTS_MAX 20000 /* ... and per sandbox, its watchers together */
#define FS_WATCH_DEFAULT_MAX 8192         /* inotify watches per sandbox (--max-watches) */
#define FS_WATCH_STREAM_HIGH_WATER (4 * 1024 * 1024)

struct cJSON;
struct err;
struct fs_watch;
struct fs_watchers;
struct registry_hooks;
struct watch_request;

/* max_watches: inotify watches one sandbox's watchers may hold together. */
struct fs_watchers *fs_watchers_new(struct event_base *base, struct registry *reg, size_t max_watches);
void fs_watchers_free(struct fs_watchers *w);
/* Registry hooks that cut a removed sandbox's WatchDir streams (the
 * connection drops, as E2B's proxy drops it) and free its watchers. */
void fs_watchers_hooks(struct fs_watchers *ws, struct registry_hooks *out);

int fs_watch_rpc_watch_dir(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

/* For fs_watch_queue.c (records in fs_watch_table.h). */
/* User, message fields, and the directory check (envd's codes). */
int fs_watch_parse(struct evhttp_request *req, struct sandbox *sb, const struct cJSON *msg,
	struct watch_request *r, struct err *err);
/* Checks the directory and starts watching it, in slices; req is answered
 * once every directory is watched (a stream's start, or CreateWatcher's
 * id), or with the error of a limit. NULL with err set when it cannot start. */
struct fs_watch *fs_watch_new(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb,
	const struct watch_request *r, bool stream, struct err *err);
void fs_watch_free(struct fs_watch *w);
/* Takes the events the kernel holds for w now. */
void fs_watch_read(struct fs_watch *w);

#endif
