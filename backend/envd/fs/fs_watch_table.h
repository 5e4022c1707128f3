/* The watchers' records, shared by fs_watch.c (the watches, their events
 * and WatchDir) and fs_watch_queue.c (CreateWatcher and the calls on its
 * watchers). */
#ifndef E2B_BACKEND_FS_WATCH_TABLE_H
#define E2B_BACKEND_FS_WATCH_TABLE_H

#include "envd/fs/fs_path.h"
#include "envd/fs/fs_watch.h"
#include "envd/fs/fs_watch_dirs.h"
#include "http/http_connect.h"
#include "registry/registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/time.h>

struct cJSON;
struct event;
struct evhttp_connection;

/* What one sandbox's watchers hold: their inotify watches (against
 * --max-watches) and their unread events. */
struct sandbox_watches {
	struct sandbox_watches *next;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	struct fs_watch_budget budget;
	size_t events; /* queued in its CreateWatcher watchers */
	size_t users;  /* watchers that point here */
};

struct fs_watch {
	struct fs_watch *next;
	struct fs_watchers *owner;
	struct sandbox_watches *sw;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	char id[24];            /* CreateWatcher's id */
	char path[FS_PATH_MAX]; /* the watched directory, as requested */
	bool include_entry;
	bool stream; /* WatchDir; else CreateWatcher */
	bool ready;  /* the first walk is done and answered */
	int ifd;
	struct event *ev;
	struct event *tick; /* the walk's next slice */
	struct fs_watch_dirs dirs;
	/* The WatchDir stream, or the CreateWatcher request until it is answered. */
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	/* queue mode (CreateWatcher) */
	struct cJSON *queue;
	size_t queued;
	bool dropped; /* at a limit: the next GetWatcherEvents says so */
	struct err drop_reason;
	/* stream mode (WatchDir) */
	struct event *keepalive, *deadline;
	struct timeval keepalive_tv;
};

struct fs_watchers {
	struct event_base *base;
	struct registry *reg;
	size_t max_watches;
	struct fs_watch *list;
	struct sandbox_watches *sandboxes;
};

struct watch_request {
	char path[FS_PATH_MAX];
	bool recursive, include_entry;
};

#endif
