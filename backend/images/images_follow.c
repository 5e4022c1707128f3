/* Following skopeo's blob files as they grow (images_follow.h). */
#define _GNU_SOURCE
#include "images/images_follow.h"

#include "lib/child_fds.h"
#include "lib/err.h"
#include "lib/text.h"
#include "lib/write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOB_PREFIX "oci-put-blob"
#define MAX_FOLLOWERS 72 /* a stack's 64 layers, the config, and room */
#define EVENTS_SIZE 4096
/* A follower that has caught up with the download writes back what it has
 * unpacked once this much more was read, so the publish's sync (and
 * skopeo's own of the blob) find little left to write. */
#define WRITEBACK_EVERY (16u << 20)

/* What a follower says on its pipe when it ends. */
struct outcome {
	bool ok;
	dev_t dev; /* the file it read: skopeo renames it to its digest's name */
	ino_t ino;
	struct images_unpack_stats stats;
};

struct follower {
	pid_t pid;
	int fd; /* its pipe's read end */
	char *dir;
	struct outcome got;
	bool have;
};

struct images_follow {
	char *layout, *scratch;
	int inotify;
	uint64_t max, *shared_total; /* in shared memory: every follower adds to it */
	struct follower w[MAX_FOLLOWERS];
	size_t n;
};

/* --- in a follower --------------------------------------------------------- */

struct growing {
	int fd, inotify, file_watch;
	const char *path;
	ino_t ino;
	bool closed;     /* skopeo has closed it: what is in it is all there is */
	size_t unsynced; /* read since the last writeback */
	char buf[1 << 20];
};

/* skopeo renames or removes the file only after closing it: once the path
 * no longer names it, it is closed. */
static void check_closed(struct growing *g)
{
	struct stat st;
	if (stat(g->path, &st) != 0 || st.st_ino != g->ino)
		g->closed = true;
}

static int wait_for_more(struct growing *g)
{
	struct pollfd p = {.fd = g->inotify, .events = POLLIN};
	if (poll(&p, 1, 1000) < 0 && errno != EINTR) /* the timeout: a last resort, should events be lost */
		return -1;
	char ev[EVENTS_SIZE] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(g->inotify, ev, sizeof ev)) > 0) {
		for (ssize_t i = 0; i < n;) {
			const struct inotify_event *e = (const void *)(ev + i);
			if (e->wd == g->file_watch && (e->mask & IN_CLOSE_WRITE))
				g->closed = true;
			i += (ssize_t)(sizeof *e + e->len);
		}
	}
	check_closed(g);
	return 0;
}

/* An images_unpack_source: what skopeo has written so far, waiting for more
 * until it has closed the file. */
static ssize_t growing_read(void *ctx, const void **buf)
{
	struct growing *g = ctx;
	for (;;) {
		bool was_closed = g->closed; /* read before the read: nothing is written after */
		ssize_t n = read(g->fd, g->buf, sizeof g->buf);
		if (n > 0) {
			g->unsynced += (size_t)n;
			*buf = g->buf;
			return n;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || was_closed)
			return n;
		if (g->unsynced >= WRITEBACK_EVERY) {
			syncfs(g->fd); /* while the network is the one to wait for */
			g->unsynced = 0;
		}
		if (wait_for_more(g) != 0)
			return -1;
	}
}

static bool open_growing(struct growing *g, const char *layout, struct outcome *o)
{
	struct stat st;
	g->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	g->fd = open(g->path, O_RDONLY | O_CLOEXEC);
	if (g->inotify < 0 || g->fd < 0 || fstat(g->fd, &st) != 0)
		return false;
	g->ino = o->ino = st.st_ino;
	o->dev = st.st_dev;
	g->file_watch = inotify_add_watch(g->inotify, g->path, IN_MODIFY | IN_CLOSE_WRITE);
	if (g->file_watch < 0 ||
		inotify_add_watch(g->inotify, layout, IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR) < 0)
		return false;
	check_closed(g); /* closed before the watch was there: no IN_CLOSE_WRITE will come */
	return true;
}

__attribute__((noreturn)) static void follow(const struct images_follow *f, const char *name, pid_t parent,
	int out)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "e2b-img-follow"); /* 15 characters at most */
	if (getppid() != parent || child_fds(out) != 0)
		_exit(1);
	struct outcome o = {.ok = false};
	struct growing *g = calloc(1, sizeof *g);
	char *path = text_printf("%s/%s", f->layout, name);
	char *dir = text_printf("%s/follow-%d", f->scratch, (int)getpid());
	char *root = dir ? text_printf("%s/root", dir) : NULL;
	struct err why;
	if (g && path && root && (g->path = path) && open_growing(g, f->layout, &o) &&
		mkdir(dir, 0700) == 0 && mkdir(root, 0755) == 0) {
		/* It reads to the end of the file, which comes once skopeo has
		 * closed it: the whole blob. */
		const struct images_unpack_source src = {.read = growing_read,
			.ctx = g,
			.shared_total = f->shared_total};
		o.ok = images_unpack_stream(&src, root, NULL, f->max, &o.stats, &why) == 0 && g->closed;
	}
	if (o.ok)
		syncfs(g->fd); /* beside skopeo's last steps, not after them */
	_exit(write_all(3, &o, sizeof o) == 0 ? 0 : 1);
}

/* --- in the pull's helper --------------------------------------------------- */

struct images_follow *images_follow_start(const char *layout, const char *scratch, uint64_t max_tar_bytes)
{
	struct images_follow *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->max = max_tar_bytes;
	f->layout = strdup(layout);
	f->scratch = strdup(scratch);
	f->shared_total = mmap(NULL, sizeof *f->shared_total, PROT_READ | PROT_WRITE,
		MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	f->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f->shared_total == MAP_FAILED)
		f->shared_total = NULL;
	if (!f->layout || !f->scratch || !f->shared_total || f->inotify < 0 ||
		inotify_add_watch(f->inotify, layout, IN_CREATE | IN_ONLYDIR) < 0) {
		int e = errno;
		images_follow_free(f);
		errno = e;
		return NULL;
	}
	return f;
}

int images_follow_fd(const struct images_follow *f)
{
	return f->inotify;
}

static void spawn(struct images_follow *f, const char *name)
{
	int p[2];
	if (f->n == MAX_FOLLOWERS || pipe2(p, O_CLOEXEC) != 0)
		return; /* not followed: unpacked from its blob afterwards */
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		close(p[0]);
		follow(f, name, parent, p[1]);
	}
	close(p[1]);
	char *dir = pid > 0 ? text_printf("%s/follow-%d", f->scratch, (int)pid) : NULL;
	if (!dir) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(p[0]);
		return;
	}
	f->w[f->n++] = (struct follower){.pid = pid, .fd = p[0], .dir = dir};
}

void images_follow_events(void *arg)
{
	struct images_follow *f = arg;
	char ev[EVENTS_SIZE] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(f->inotify, ev, sizeof ev)) > 0) {
		for (ssize_t i = 0; i < n;) {
			const struct inotify_event *e = (const void *)(ev + i);
			if (e->len && (e->mask & IN_CREATE) && !(e->mask & IN_ISDIR) &&
				strncmp(e->name, BLOB_PREFIX, strlen(BLOB_PREFIX)) == 0)
				spawn(f, e->name);
			i += (ssize_t)(sizeof *e + e->len);
		}
	}
}

void images_follow_end(struct images_follow *f, bool skopeo_ok)
{
	for (size_t i = 0; i < f->n; i++) {
		struct follower *w = &f->w[i];
		if (w->pid <= 0)
			continue;
		if (!skopeo_ok)
			kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
		w->pid = 0;
		w->have = skopeo_ok && read(w->fd, &w->got, sizeof w->got) == (ssize_t)sizeof w->got &&
			w->got.ok && memchr(w->got.stats.diff_id, '\0', sizeof w->got.stats.diff_id);
		close(w->fd);
		w->fd = -1;
	}
}

const char *images_follow_take(struct images_follow *f, const char *blob, const char *diff_id,
	struct images_unpack_stats *stats)
{
	struct stat st;
	if (!f || !blob || !diff_id || lstat(blob, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	for (size_t i = 0; i < f->n; i++) {
		struct follower *w = &f->w[i];
		if (w->have && w->got.dev == st.st_dev && w->got.ino == st.st_ino &&
			strcmp(w->got.stats.diff_id, diff_id) == 0) {
			w->have = false;
			*stats = w->got.stats;
			return w->dir;
		}
	}
	return NULL;
}

void images_follow_free(struct images_follow *f)
{
	if (!f)
		return;
	images_follow_end(f, false);
	for (size_t i = 0; i < f->n; i++)
		free(f->w[i].dir);
	if (f->inotify >= 0)
		close(f->inotify);
	if (f->shared_total)
		munmap(f->shared_total, sizeof *f->shared_total);
	free(f->layout);
	free(f->scratch);
	free(f);
}
