/* A watcher's directories and their walk in slices (fs_watch_dirs.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_watch_dirs.h"

#include "envd/fs/fs_path.h"
#include "http/http_connect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_MASK \
	(IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_DELETE | IN_DELETE_SELF | IN_MOVED_FROM | IN_MOVE_SELF | \
		IN_ATTRIB | IN_ONLYDIR)
#define MAX_DEPTH 64 /* levels below the watched root, as before the walk was sliced */

struct fs_watch_dir {
	int wd;
	char *rel; /* "" for the watched directory itself */
};

struct fs_watch_todo {
	char *dir, *rel;
	unsigned depth;
	bool announce;
};

static void budget_error(const struct fs_watch_dirs *d, struct err *err)
{
	err_set(err, CONNECT_RESOURCE_EXHAUSTED,
		"the sandbox has reached its limit of %zu inotify watches (--max-watches)", d->budget->max);
}

/* The array of n elements (of cap) with room for one more, doubled when
 * full; NULL when out of memory (the array is then unchanged). */
static void *room_for_one(void *array, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return array;
	size_t grown_cap = *cap ? *cap * 2 : 16;
	void *grown = realloc(array, grown_cap * size);
	if (grown)
		*cap = grown_cap;
	return grown;
}

static int push_depth(struct fs_watch_dirs *d, const char *dir, const char *rel, unsigned depth,
	bool announce, struct err *err)
{
	if (d->budget->in_use >= d->budget->max) {
		budget_error(d, err);
		return -1;
	}
	struct fs_watch_todo *todo = room_for_one(d->todo, d->ntodo, &d->cap_todo, sizeof *todo);
	if (!todo)
		goto oom;
	d->todo = todo;
	struct fs_watch_todo *t = &d->todo[d->ntodo];
	t->dir = strdup(dir);
	t->rel = strdup(rel);
	if (!t->dir || !t->rel) {
		free(t->dir);
		free(t->rel);
		goto oom;
	}
	t->depth = depth;
	t->announce = announce;
	d->ntodo++;
	d->budget->in_use++;
	return 0;
oom:
	err_set(err, CONNECT_INTERNAL, "out of memory");
	return -1;
}

int fs_watch_dirs_push(struct fs_watch_dirs *d, const char *dir, const char *rel, bool announce,
	struct err *err)
{
	return push_depth(d, dir, rel, 0, announce, err);
}

/* inotify_add_watch's failure as the client should see it. */
static void watch_error(int en, const struct fs_watch_todo *t, struct err *err)
{
	if (en == ENOSPC)
		err_set(err, CONNECT_RESOURCE_EXHAUSTED,
			"the host's limit of inotify watches is reached (fs.inotify.max_user_watches)");
	else if (en == ENOMEM)
		err_set(err, CONNECT_RESOURCE_EXHAUSTED, "out of memory for inotify watches");
	else
		err_set(err, CONNECT_INTERNAL, "error watching %s: %s", t->dir, strerror(en));
}

/* The index of wd in d->dirs (kept sorted by wd), or where it would go. */
static size_t find(const struct fs_watch_dirs *d, int wd)
{
	size_t lo = 0, hi = d->ndirs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->dirs[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Records wd; the kernel hands out increasing numbers, but gives a
 * directory watched already (reached twice, by the walk and by its create
 * event) its old one: that one is not counted twice. */
static int record(struct fs_watch_dirs *d, int wd, const char *path, struct err *err)
{
	size_t at = find(d, wd);
	if (at < d->ndirs && d->dirs[at].wd == wd) {
		d->budget->in_use--;
		return 0;
	}
	struct fs_watch_dir *dirs = room_for_one(d->dirs, d->ndirs, &d->cap_dirs, sizeof *dirs);
	if (!dirs)
		goto oom;
	d->dirs = dirs;
	char *rel = strdup(path);
	if (!rel)
		goto oom;
	memmove(&d->dirs[at + 1], &d->dirs[at], (d->ndirs - at) * sizeof *d->dirs);
	d->dirs[at].wd = wd;
	d->dirs[at].rel = rel;
	d->ndirs++;
	return 0;
oom:
	d->budget->in_use--;
	err_set(err, CONNECT_INTERNAL, "out of memory");
	return -1;
}

/* Queues the subdirectories of t (open as fd, which this closes) and
 * announces its entries when asked. */
static int descend(struct fs_watch_dirs *d, int fd, const struct fs_watch_todo *t, fs_watch_announce announce,
	void *arg, struct err *err)
{
	DIR *dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return 0;
	}
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
			(e->d_type != DT_DIR && !t->announce))
			continue;
		char sub[FS_PATH_MAX], subrel[FS_PATH_MAX];
		int sn = snprintf(sub, sizeof sub, "%s/%s", strcmp(t->dir, "/") ? t->dir : "", e->d_name);
		int rn = snprintf(subrel, sizeof subrel, "%s%s%s", t->rel, *t->rel ? "/" : "", e->d_name);
		if (sn <= 0 || rn < 0 || (size_t)sn >= sizeof sub || (size_t)rn >= sizeof subrel)
			continue;
		if (t->announce) {
			struct stat st;
			announce(arg, subrel, sub, "EVENT_TYPE_CREATE");
			if (e->d_type == DT_REG &&
				fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				st.st_size > 0)
				announce(arg, subrel, sub, "EVENT_TYPE_WRITE");
		}
		if (e->d_type == DT_DIR)
			rc = push_depth(d, sub, subrel, t->depth + 1, t->announce, err);
	}
	closedir(dir);
	return rc;
}

/* Watches t and queues what is below it; the budget already counts t. */
static int visit(struct fs_watch_dirs *d, int root_fd, struct fs_watch_todo *t, fs_watch_announce announce,
	void *arg, struct err *err)
{
	int fd = fs_open(root_fd, t->dir, O_RDONLY | O_DIRECTORY, 0, false);
	int wd = -1, en = errno;
	if (fd >= 0) {
		char proc[64];
		fs_proc_path(fd, proc, sizeof proc);
		wd = inotify_add_watch(d->ifd, proc, WATCH_MASK);
		en = errno;
	}
	if (wd < 0) {
		d->budget->in_use--;
		if (fd >= 0)
			close(fd);
		/* A subdirectory may be gone or closed to us; the root, or a
		 * limit, must be said. */
		if (*t->rel && en != ENOSPC && en != ENOMEM)
			return 0;
		watch_error(en, t, err);
		return -1;
	}
	if (record(d, wd, t->rel, err) != 0) {
		close(fd);
		return -1;
	}
	if (!d->recursive || t->depth >= MAX_DEPTH) {
		close(fd);
		return 0;
	}
	return descend(d, fd, t, announce, arg, err);
}

int fs_watch_dirs_step(struct fs_watch_dirs *d, int root_fd, fs_watch_announce announce, void *arg,
	struct err *err)
{
	for (int budget = FS_WATCH_DIRS_SLICE; budget > 0 && d->ntodo > 0; budget--) {
		struct fs_watch_todo t = d->todo[--d->ntodo];
		int rc = visit(d, root_fd, &t, announce, arg, err);
		free(t.dir);
		free(t.rel);
		if (rc != 0)
			return -1;
	}
	return 0;
}

const char *fs_watch_dirs_rel(const struct fs_watch_dirs *d, int wd)
{
	size_t at = find(d, wd);
	return at < d->ndirs && d->dirs[at].wd == wd ? d->dirs[at].rel : NULL;
}

void fs_watch_dirs_clear(struct fs_watch_dirs *d)
{
	for (size_t i = 0; i < d->ndirs; i++)
		free(d->dirs[i].rel);
	for (size_t i = 0; i < d->ntodo; i++) {
		free(d->todo[i].dir);
		free(d->todo[i].rel);
	}
	if (d->budget)
		d->budget->in_use -= d->ndirs + d->ntodo;
	free(d->dirs);
	free(d->todo);
	d->dirs = NULL;
	d->todo = NULL;
	d->ndirs = d->cap_dirs = d->ntodo = d->cap_todo = 0;
}
