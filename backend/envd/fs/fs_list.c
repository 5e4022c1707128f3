/* ListDir's walk in slices on the event loop (see fs_list.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_list.h"

#include "envd/fs/fs_ctx.h"
#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_owners.h"
#include "envd/fs/fs_path.h"
#include "http/http_connect.h"
#include "http/http_conns.h"
#include "http/http_reply.h"
#include "http/http_request.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One directory being listed: its sorted names and the next one to visit. */
struct level {
	char **names;
	size_t n, next;
	uint32_t depth; /* levels still to list, this one included */
	char path[FS_PATH_MAX], display[FS_PATH_MAX];
};

struct list_job {
	struct list_job *prev, *next; /* listings in progress, for fs_list_shutdown */
	struct fs_ctx *ctx;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	struct evhttp_request *req; /* NULL once the client has gone */
	struct evhttp_connection *evcon;
	int root_fd;
	struct fs_owners *owners; /* account names, read once for the listing */
	struct event *tick;       /* the next slice */
	struct level *stack;
	size_t depth, cap;
	struct evbuffer *body; /* the entries, as JSON text joined by commas */
	size_t count;          /* entries in body */
	size_t pending;        /* names read but not yet visited, every level */
	struct err err;
	bool failed;
};

/* Every listing in progress (the backend has one loop and one envd
 * listener): a pending slice is only a timer, which the loop's end would
 * not free. */
static struct list_job *live;

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void level_free(struct list_job *j, struct level *l)
{
	j->pending -= l->n - l->next;
	for (size_t i = l->next; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
}

/* Reads the names of the directory at path, sorted, as a new level. An
 * unreadable directory is skipped, as WalkDir's callback does. More names
 * than the answer may still hold make it resource_exhausted. */
static int push(struct list_job *j, const char *path, const char *display, uint32_t depth)
{
	int fd = fs_open(j->root_fd, path, O_RDONLY | O_DIRECTORY, 0, false);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (j->depth == j->cap) {
		size_t cap = j->cap ? j->cap * 2 : 8;
		struct level *grown = realloc(j->stack, cap * sizeof *grown);
		if (!grown) {
			closedir(d);
			return -1;
		}
		j->stack = grown;
		j->cap = cap;
	}
	struct level *l = &j->stack[j->depth];
	memset(l, 0, offsetof(struct level, path));
	l->depth = depth;
	snprintf(l->path, sizeof l->path, "%s", path);
	snprintf(l->display, sizeof l->display, "%s", display);
	size_t room = FS_LIST_MAX_ENTRIES - j->count - j->pending, cap = 0;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (l->n == room) {
			err_set(&j->err, CONNECT_RESOURCE_EXHAUSTED, "too many entries (more than %d)",
				FS_LIST_MAX_ENTRIES);
			j->failed = true;
			break;
		}
		if (l->n == cap) {
			cap = cap ? cap * 2 : 64;
			char **grown = realloc(l->names, cap * sizeof *grown);
			if (!grown) {
				rc = -1;
				break;
			}
			l->names = grown;
		}
		l->names[l->n] = strdup(e->d_name);
		if (!l->names[l->n]) {
			rc = -1;
			break;
		}
		l->n++;
	}
	closedir(d);
	j->pending += l->n;
	if (l->n > 1)
		qsort(l->names, l->n, sizeof *l->names, name_cmp);
	j->depth++;
	return rc;
}

/* The next entry of the deepest level: appended, and descended into when
 * it is a directory (not a symlink to one: WalkDir does not follow them). */
static int visit(struct list_job *j, const struct sandbox *sb)
{
	struct level *l = &j->stack[j->depth - 1];
	char *name = l->names[l->next++];
	j->pending--;
	char child[FS_PATH_MAX], display[FS_PATH_MAX];
	int cn = snprintf(child, sizeof child, "%s/%s", strcmp(l->path, "/") ? l->path : "", name);
	int dn = snprintf(display, sizeof display, "%s/%s", strcmp(l->display, "/") ? l->display : "", name);
	free(name);
	if (cn < 0 || dn < 0 || (size_t)cn >= sizeof child || (size_t)dn >= sizeof display)
		return 0; /* longer than any path the sandbox can open */
	uint32_t depth = l->depth;
	cJSON *entry = fs_entry_info(sb, j->root_fd, child, j->owners);
	if (entry) {
		cJSON_ReplaceItemInObject(entry, "path", cJSON_CreateString(display));
		char *text = reply_json_print(entry);
		cJSON_Delete(entry);
		if (!text)
			return -1;
		if (j->count++)
			evbuffer_add(j->body, ",", 1);
		evbuffer_add(j->body, text, strlen(text));
		free(text);
	}
	struct stat st;
	const char *leaf;
	int parent = fs_open_parent(j->root_fd, child, &leaf);
	bool is_dir =
		parent >= 0 && fstatat(parent, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
	if (parent >= 0)
		close(parent);
	return is_dir && depth > 1 ? push(j, child, display, depth - 1) : 0;
}

static void job_free(struct list_job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else if (live == j)
		live = j->next;
	if (j->next)
		j->next->prev = j->prev;
	while (j->depth > 0)
		level_free(j, &j->stack[--j->depth]);
	free(j->stack);
	if (j->tick)
		event_free(j->tick);
	if (j->body)
		evbuffer_free(j->body);
	close(j->root_fd);
	fs_owners_free(j->owners);
	free(j);
}

static void answer(struct list_job *j)
{
	http_conn_set_closecb(j->evcon, NULL, NULL);
	int status;
	if (j->failed) {
		status = connect_reply_unary_error(j->req, &j->err);
	} else if (j->count == 0) {
		status = connect_reply_unary(j->req, cJSON_CreateObject());
	} else {
		evbuffer_prepend(j->body, "{\"entries\":[", 12);
		evbuffer_add(j->body, "]}", 2);
		status = reply_json_text(j->req, 200, j->body);
	}
	request_log("envd", j->req, status);
}

static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct list_job *j = arg;
	http_conn_gone_free_request(j->req);
	j->req = NULL; /* the next slice stops */
}

static void step(evutil_socket_t fd, short what, void *arg);

/* A zero timer, not event_base_once: libevent runs a zero-timeout
 * event_base_once at once, in the same loop turn, so the slices would never
 * let other events in. A timer waits for the next turn's poll. */
static void schedule(struct list_job *j)
{
	struct timeval now = {0, 0};
	if (evtimer_add(j->tick, &now) != 0) {
		err_set(&j->err, CONNECT_INTERNAL, "out of memory");
		j->failed = true;
		if (j->req)
			answer(j);
		job_free(j);
	}
}

static void step(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct list_job *j = arg;
	if (!j->req) {
		job_free(j);
		return;
	}
	const struct sandbox *sb = registry_find(j->ctx->reg, j->sandbox_id);
	if (!sb) {
		/* Removed meanwhile: cut, as E2B's proxy does; no answer made up. */
		http_conn_set_closecb(j->evcon, NULL, NULL);
		evhttp_connection_free(j->evcon); /* frees the request on it */
		job_free(j);
		return;
	}
	for (int budget = FS_LIST_SLICE; budget > 0 && j->depth > 0 && !j->failed; budget--) {
		struct level *top = &j->stack[j->depth - 1];
		if (top->next == top->n) {
			level_free(j, top);
			j->depth--;
		} else if (visit(j, sb) != 0) {
			err_set(&j->err, CONNECT_INTERNAL, "out of memory");
			j->failed = true;
		}
	}
	if (j->failed || j->depth == 0) {
		answer(j);
		job_free(j);
	} else {
		schedule(j);
	}
}

int fs_list_start(struct fs_ctx *ctx, struct evhttp_request *req, const struct sandbox *sb, int root_fd,
	const char *path, uint32_t depth)
{
	struct list_job *j = calloc(1, sizeof *j);
	if (j) {
		j->body = evbuffer_new();
		j->tick = evtimer_new(ctx->base, step, j);
		j->owners = fs_owners_load(sb);
	}
	if (!j || !j->body || !j->tick || !j->owners) {
		if (j) {
			if (j->body)
				evbuffer_free(j->body);
			if (j->tick)
				event_free(j->tick);
			fs_owners_free(j->owners);
		}
		free(j);
		close(root_fd);
		return -1;
	}
	j->ctx = ctx;
	snprintf(j->sandbox_id, sizeof j->sandbox_id, "%s", sb->id);
	j->req = req;
	j->evcon = evhttp_request_get_connection(req);
	j->root_fd = root_fd;
	if (push(j, path, path, depth) != 0) {
		job_free(j);
		return -1;
	}
	http_conn_set_closecb(j->evcon, on_client_gone, j);
	j->next = live;
	if (live)
		live->prev = j;
	live = j;
	schedule(j);
	return 0;
}

void fs_list_shutdown(void)
{
	while (live) {
		struct list_job *j = live;
		/* Unanswered: evhttp frees the request with its connection. */
		if (j->req)
			http_conn_set_closecb(j->evcon, NULL, NULL);
		job_free(j);
	}
}
