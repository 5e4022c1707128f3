/* The directories one inotify watcher watches (fs_watch.h), and the walk
 * that adds them in slices on the event loop: a recursive watch of a tree of
 * 100,000 directories must not hold the loop. Each
 * directory queued or watched counts against the sandbox's watch budget
 * (--max-watches); at the budget, or at the kernel's own limits, the walk
 * stops with resource_exhausted naming the limit, never a silent watcher. */
#ifndef E2B_BACKEND_FS_WATCH_DIRS_H
#define E2B_BACKEND_FS_WATCH_DIRS_H

#include <stdbool.h>
#include <stddef.h>

struct err;

#define FS_WATCH_DIRS_SLICE 256 /* directories visited per loop turn */

struct fs_watch_dir;
struct fs_watch_todo;

/* A sandbox's watches: in_use counts every watched or queued directory of
 * its watchers, max is --max-watches. */
struct fs_watch_budget {
	size_t in_use, max;
};

struct fs_watch_dirs {
	int ifd; /* the watcher's inotify descriptor */
	bool recursive;
	struct fs_watch_budget *budget;
	struct fs_watch_dir *dirs; /* watched: wd and path below the root, by wd */
	size_t ndirs, cap_dirs;
	struct fs_watch_todo *todo; /* still to visit, a stack */
	size_t ntodo, cap_todo;
};

/* Told of each entry of a directory that was created after the watch began
 * (what was made in it before its watch existed): rel below the watched
 * root, full the sandbox path, type an EVENT_TYPE_* name. */
typedef void (*fs_watch_announce)(void *arg, const char *rel, const char *full, const char *type);

/* Queues directory dir (a sandbox path; rel below the watched root) to be
 * watched; announce: tell of its entries. -1 with err set at the budget. */
int fs_watch_dirs_push(struct fs_watch_dirs *d, const char *dir, const char *rel, bool announce,
	struct err *err);
/* Visits up to FS_WATCH_DIRS_SLICE queued directories under root_fd:
 * watches each, and queues its subdirectories when recursive. 0, or -1 with
 * err set (resource_exhausted at a limit; the watched root itself cannot be
 * watched). */
int fs_watch_dirs_step(struct fs_watch_dirs *d, int root_fd, fs_watch_announce announce, void *arg,
	struct err *err);
/* The path below the root of watch descriptor wd, or NULL. */
const char *fs_watch_dirs_rel(const struct fs_watch_dirs *d, int wd);
/* Forgets every directory (the inotify descriptor is the caller's) and
 * gives their watches back to the budget. */
void fs_watch_dirs_clear(struct fs_watch_dirs *d);

#endif
