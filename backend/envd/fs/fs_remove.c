/* Removal of a tree in slices on the event loop (see fs_remove.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_remove.h"

#include "envd/fs/fs_path.h"
#include "http/http_parked.h"
#include "http/http_request.h"

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct level {
	DIR *dir;
	char name[NAME_MAX + 1]; /* its name in the level above */
};

struct remove_job {
	struct event *tick; /* the next slice */
	int parent;         /* the target's parent directory */
	char leaf[NAME_MAX + 1];
	struct level *stack;
	size_t depth, cap;
	int err;
	void (*done)(void *arg, int err);
	void *arg;
};

static void job_finish(struct remove_job *j)
{
	while (j->depth > 0)
		closedir(j->stack[--j->depth].dir);
	free(j->stack);
	event_free(j->tick);
	close(j->parent);
	j->done(j->arg, j->err);
	free(j);
}

/* Opens name below dir (a directory, not followed) as a new level. */
static int push(struct remove_job *j, int dir, const char *name)
{
	if (j->depth == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 16;
		struct level *grown = realloc(j->stack, cap * sizeof *grown);
		if (!grown)
			return -1;
		j->stack = grown;
		j->cap = cap;
	}
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	j->stack[j->depth].dir = d;
	snprintf(j->stack[j->depth].name, sizeof j->stack[j->depth].name, "%s", name);
	j->depth++;
	return 0;
}

static void step(evutil_socket_t fd, short what, void *arg);

/* A zero timer, not event_base_once: libevent runs a zero-timeout
 * event_base_once at once, in the same loop turn, so the slices would never
 * let other events in. A timer waits for the next turn's poll. */
static void schedule(struct remove_job *j)
{
	struct timeval now = {0, 0};
	if (evtimer_add(j->tick, &now) != 0) {
		j->err = ENOMEM;
		job_finish(j);
	}
}

static void step(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct remove_job *j = arg;
	for (int budget = FS_REMOVE_SLICE; budget > 0 && j->depth > 0; budget--) {
		struct level *top = &j->stack[j->depth - 1];
		int dfd = dirfd(top->dir);
		errno = 0;
		struct dirent *e = readdir(top->dir);
		if (!e) {
			int above = j->depth > 1 ? dirfd(j->stack[j->depth - 2].dir) : j->parent;
			if (unlinkat(above, top->name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
				closedir(top->dir);
				j->depth--;
			} else if (errno == ENOTEMPTY) {
				rewinddir(top->dir); /* entries this pass did not see */
			} else {
				j->err = errno;
				break;
			}
			continue;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, e->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if ((errno != EISDIR && errno != EPERM) || push(j, dfd, e->d_name) != 0) {
			j->err = errno ? errno : ENOMEM;
			break;
		}
	}
	if (j->err || j->depth == 0)
		job_finish(j);
	else
		schedule(j);
}

int fs_remove_start(struct event_base *base, int root_fd, const char *path, void (*done)(void *arg, int err),
	void *arg)
{
	const char *leaf;
	struct remove_job *j = calloc(1, sizeof *j);
	if (!j)
		return -1;
	j->tick = evtimer_new(base, step, j);
	if (!j->tick) {
		free(j);
		return -1;
	}
	j->done = done;
	j->arg = arg;
	j->parent = fs_open_parent(root_fd, path, &leaf);
	if (j->parent < 0) {
		/* A missing parent means a missing path: nothing to do. */
		j->err = errno == ENOENT || errno == ENOTDIR ? 0 : errno;
		j->parent = open("/", O_PATH | O_CLOEXEC);
		schedule(j);
		return 0;
	}
	if (strcmp(leaf, ".") == 0 || strlen(leaf) > NAME_MAX) {
		j->err = strcmp(leaf, ".") == 0 ? EBUSY : ENAMETOOLONG;
	} else {
		snprintf(j->leaf, sizeof j->leaf, "%s", leaf);
		if (unlinkat(j->parent, j->leaf, 0) != 0) {
			if (errno == EISDIR || errno == EPERM) {
				if (push(j, j->parent, j->leaf) != 0)
					j->err = errno == ENOENT ? 0 : errno;
			} else if (errno != ENOENT) {
				j->err = errno;
			}
		}
	}
	schedule(j);
	return 0;
}

/* A removal a request waits for. */
struct for_request {
	struct http_parked parked;
	const char *server;
	fs_remove_answer answer;
	char path[FS_PATH_MAX];
};

static void on_removed_for_request(void *arg, int err)
{
	struct for_request *r = arg;
	struct evhttp_request *req = http_parked_take(&r->parked);
	if (req)
		request_log(r->server, req, r->answer(req, r->path, err));
	free(r);
}

int fs_remove_for_request(struct event_base *base, int root_fd, const char *path, struct evhttp_request *req,
	const char *server, fs_remove_answer answer)
{
	struct for_request *r = calloc(1, sizeof *r);
	if (!r)
		return -1;
	snprintf(r->path, sizeof r->path, "%s", path);
	r->server = server;
	r->answer = answer;
	http_parked_hold(&r->parked, req);
	if (fs_remove_start(base, root_fd, r->path, on_removed_for_request, r) != 0) {
		http_parked_take(&r->parked);
		free(r);
		return -1;
	}
	return 0;
}
