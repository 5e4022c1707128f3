/* inotify watchers for WatchDir and the CreateWatcher family (fs_watch.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_watch.h"

#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_path.h"
#include "envd/fs/fs_rpc.h"
#include "http/http_connect.h"
#include "http/http_conns.h"
#include "http/http_protojson.h"
#include "lib/random.h"
#include "registry/registry.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_DELETE | IN_DELETE_SELF | \
	IN_MOVED_FROM | IN_MOVE_SELF | IN_ATTRIB | IN_ONLYDIR)

struct wdir {
	int wd;
	char *rel; /* "" for the watched directory itself */
};

struct fs_watch {
	struct fs_watch *next;
	struct fs_watchers *owner;
	char sandbox_id[SANDBOX_ID_LEN + 1];
	char id[24];                /* CreateWatcher's id */
	char path[FS_PATH_MAX];     /* the watched directory, as requested */
	bool recursive, include_entry;
	int ifd;
	struct event *ev;
	struct wdir *dirs;
	size_t ndirs;
	/* queue mode (CreateWatcher) */
	cJSON *queue;
	/* stream mode (WatchDir) */
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	struct event *keepalive, *deadline;
	struct timeval keepalive_tv;
};

struct fs_watchers {
	struct event_base *base;
	struct registry *reg;
	struct fs_watch *list;
};

struct fs_watchers *fs_watchers_new(struct event_base *base, struct registry *reg)
{
	struct fs_watchers *w = calloc(1, sizeof *w);
	if (w) {
		w->base = base;
		w->reg = reg;
	}
	return w;
}

static void watch_free(struct fs_watch *w)
{
	struct fs_watch **pp = &w->owner->list;
	while (*pp && *pp != w)
		pp = &(*pp)->next;
	if (*pp)
		*pp = w->next;
	if (w->ev)
		event_free(w->ev);
	if (w->keepalive)
		event_free(w->keepalive);
	if (w->deadline)
		event_free(w->deadline);
	if (w->ifd >= 0)
		close(w->ifd);
	for (size_t i = 0; i < w->ndirs; i++)
		free(w->dirs[i].rel);
	free(w->dirs);
	cJSON_Delete(w->queue);
	free(w);
}

/* Ends a WatchDir stream (err NULL: a clean end) and frees the watch. */
static void stream_end(struct fs_watch *w, const struct connect_error *err)
{
	if (w->evcon) {
		struct evbuffer *buf = evbuffer_new();
		if (buf) {
			connect_end_stream_add(buf, err);
			evhttp_send_reply_chunk(w->req, buf);
			evbuffer_free(buf);
		}
		http_conn_set_closecb(w->evcon, NULL, NULL);
		evhttp_send_reply_end(w->req);
	}
	watch_free(w);
}

/* As E2B's proxy does when the sandbox behind it is gone: a WatchDir
 * stream's connection drops, no end-stream frame is made up. Watchers
 * of the queue kind go too; nobody can reach them any more. */
static void on_sandbox_removing(void *ctx, struct sandbox *sb)
{
	struct fs_watchers *ws = ctx;
	for (struct fs_watch *w = ws->list, *next; w; w = next) {
		next = w->next;
		if (strcmp(w->sandbox_id, sb->id) != 0)
			continue;
		struct evhttp_connection *evcon = w->evcon;
		if (evcon)
			http_conn_set_closecb(evcon, NULL, NULL);
		watch_free(w);
		if (evcon)
			evhttp_connection_free(evcon); /* frees the request on it */
	}
}

void fs_watchers_hooks(struct fs_watchers *ws, struct registry_hooks *out)
{
	*out = (struct registry_hooks){.ctx = ws, .removing = on_sandbox_removing};
}

void fs_watchers_free(struct fs_watchers *ws)
{
	if (!ws)
		return;
	while (ws->list) {
		if (ws->list->req)
			stream_end(ws->list, NULL);
		else
			watch_free(ws->list);
	}
	free(ws);
}

static void emit(struct fs_watch *w, cJSON *event);
static void emit_event(struct fs_watch *w, struct sandbox *sb, int root_fd, const char *rel,
	const char *full, const char *type, bool entry);

/* Watches dir (sandbox path; rel below the watched root) and, when
 * recursive, its subdirectories. sb is non-NULL for a directory that was just
 * created: what was made in it before its watch existed (mkdir -p a/b &&
 * echo > a/b/f) is announced as created (and written, when not empty), or no
 * event would ever tell of it. */
static void add_dir(struct fs_watch *w, struct sandbox *sb, int root_fd, const char *dir,
	const char *rel, int depth)
{
	int fd = fs_open(root_fd, dir, O_RDONLY | O_DIRECTORY, 0, false);
	if (fd < 0)
		return;
	char proc[64];
	fs_proc_path(fd, proc, sizeof proc);
	int wd = inotify_add_watch(w->ifd, proc, WATCH_MASK);
	if (wd >= 0) {
		struct wdir *grown = realloc(w->dirs, (w->ndirs + 1) * sizeof *grown);
		char *copy = strdup(rel);
		if (grown && copy) {
			w->dirs = grown;
			w->dirs[w->ndirs].wd = wd;
			w->dirs[w->ndirs].rel = copy;
			w->ndirs++;
		} else {
			if (grown)
				w->dirs = grown;
			free(copy);
		}
	}
	if (!w->recursive || depth > 64) {
		close(fd);
		return;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || (e->d_type != DT_DIR && !sb))
			continue;
		char sub[FS_PATH_MAX], subrel[FS_PATH_MAX];
		int sn = snprintf(sub, sizeof sub, "%s/%s", strcmp(dir, "/") ? dir : "", e->d_name);
		int rn = snprintf(subrel, sizeof subrel, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		if (sn <= 0 || rn < 0 || (size_t)sn >= sizeof sub || (size_t)rn >= sizeof subrel)
			continue;
		if (sb) {
			struct stat st;
			emit_event(w, sb, root_fd, subrel, sub, "EVENT_TYPE_CREATE", true);
			if (e->d_type == DT_REG && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_size > 0)
				emit_event(w, sb, root_fd, subrel, sub, "EVENT_TYPE_WRITE", true);
		}
		if (e->d_type == DT_DIR)
			add_dir(w, sb, root_fd, sub, subrel, depth + 1);
	}
	closedir(d);
}

static const char *rel_of(const struct fs_watch *w, int wd)
{
	for (size_t i = 0; i < w->ndirs; i++)
		if (w->dirs[i].wd == wd)
			return w->dirs[i].rel;
	return NULL;
}

static void emit(struct fs_watch *w, cJSON *event)
{
	if (w->queue) {
		if (cJSON_GetArraySize(w->queue) >= FS_WATCH_QUEUE_MAX)
			cJSON_DeleteItemFromArray(w->queue, 0);
		cJSON_AddItemToArray(w->queue, event);
		return;
	}
	cJSON *msg = cJSON_CreateObject();
	if (msg)
		cJSON_AddItemToObject(msg, "filesystem", event);
	else
		cJSON_Delete(event);
	struct evbuffer *buf = evbuffer_new();
	if (msg && buf && connect_envelope_add_json(buf, 0, msg) == 0)
		evhttp_send_reply_chunk(w->req, buf);
	if (buf)
		evbuffer_free(buf);
	cJSON_Delete(msg);
	if (w->keepalive)
		evtimer_add(w->keepalive, &w->keepalive_tv);
}

/* One event: its name below the watched root, its type and, when asked, the
 * entry it is about. */
static void emit_event(struct fs_watch *w, struct sandbox *sb, int root_fd, const char *rel,
	const char *full, const char *type, bool entry)
{
	cJSON *ev = cJSON_CreateObject();
	if (!ev)
		return;
	cJSON_AddStringToObject(ev, "name", rel);
	cJSON_AddStringToObject(ev, "type", type);
	if (w->include_entry && entry && sb && root_fd >= 0) {
		cJSON *info = fs_entry_info(sb, root_fd, full, NULL);
		if (info)
			cJSON_AddItemToObject(ev, "entry", info);
	}
	emit(w, ev);
}

static void on_inotify(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct fs_watch *w = arg;
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(fd, buf, sizeof buf);
	if (n <= 0)
		return;
	struct sandbox *sb = registry_find(w->owner->reg, w->sandbox_id);
	int root_fd = sb ? fs_root_open(sb) : -1;
	bool root_gone = false;
	static const struct {
		uint32_t bits;
		const char *type;
		bool entry;
	} kinds[] = {
		{IN_CREATE | IN_MOVED_TO, "EVENT_TYPE_CREATE", true},
		{IN_MODIFY, "EVENT_TYPE_WRITE", true},
		{IN_DELETE | IN_DELETE_SELF, "EVENT_TYPE_REMOVE", false},
		{IN_MOVED_FROM | IN_MOVE_SELF, "EVENT_TYPE_RENAME", false},
		{IN_ATTRIB, "EVENT_TYPE_CHMOD", true},
	};
	for (char *p = buf; p < buf + n;) {
		struct inotify_event *ie = (struct inotify_event *)p;
		p += sizeof *ie + ie->len;
		const char *base = rel_of(w, ie->wd);
		if (!base)
			continue;
		if (ie->mask & IN_IGNORED) {
			if (!*base)
				root_gone = true;
			continue;
		}
		/* Self events of subdirectories repeat their parent's. */
		if (!ie->len && *base)
			continue;
		char rel[FS_PATH_MAX], full[FS_PATH_MAX];
		int rn = snprintf(rel, sizeof rel, "%s%s%s", base, *base && ie->len ? "/" : "",
			ie->len ? ie->name : "");
		int fn = snprintf(full, sizeof full, "%s%s%s", w->path,
			*rel && strcmp(w->path, "/") ? "/" : "", rel);
		if (rn < 0 || fn < 0 || (size_t)rn >= sizeof rel || (size_t)fn >= sizeof full)
			continue;
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
			if (ie->mask & kinds[k].bits)
				emit_event(w, sb, root_fd, rel, full, kinds[k].type, kinds[k].entry);
		/* After the directory's own event, what it already holds. */
		if (w->recursive && (ie->mask & IN_ISDIR) && (ie->mask & (IN_CREATE | IN_MOVED_TO)) &&
		    root_fd >= 0 && sb)
			add_dir(w, sb, root_fd, full, rel, 0);
	}
	if (root_fd >= 0)
		close(root_fd);
	if (w->req && w->evcon &&
	    evbuffer_get_length(bufferevent_get_output(evhttp_connection_get_bufferevent(w->evcon))) >
		    FS_WATCH_STREAM_HIGH_WATER) {
		struct connect_error err;
		connect_error_set(&err, CONNECT_RESOURCE_EXHAUSTED, "watch events are not being read");
		stream_end(w, &err);
		return;
	}
	if (root_gone) {
		if (w->req)
			stream_end(w, NULL);
		else if (!sb)
			watch_free(w); /* the sandbox is gone: nobody can drain it */
	}
}

struct watch_request {
	char path[FS_PATH_MAX];
	bool recursive, include_entry;
};

/* User, message fields, and the directory check (envd's codes). */
static int parse_watch(struct evhttp_request *req, struct sandbox *sb, const cJSON *msg,
	struct watch_request *r, struct connect_error *err)
{
	struct fs_user u;
	const char *raw = "";
	bool network = false;
	r->recursive = r->include_entry = false;
	if (fs_rpc_user(req, sb, &u, err) != 0 ||
	    protojson_string(msg, "path", "path", &raw, err) == PROTOJSON_BAD ||
	    protojson_bool(msg, "recursive", "recursive", &r->recursive, err) == PROTOJSON_BAD ||
	    protojson_bool(msg, "includeEntry", "include_entry", &r->include_entry, err) == PROTOJSON_BAD ||
	    protojson_bool(msg, "allowNetworkMounts", "allow_network_mounts", &network, err) == PROTOJSON_BAD ||
	    fs_rpc_path(raw, &u, r->path, sizeof r->path, err) != 0)
		return -1;
	return 0;
}

static struct fs_watch *watch_new(struct envd_ctx *ctx, struct sandbox *sb,
	const struct watch_request *r, struct connect_error *err)
{
	int root_fd = fs_root_open(sb);
	int fd = root_fd >= 0 ? fs_open(root_fd, r->path, O_PATH, 0, false) : -1;
	struct stat st;
	char t[128];
	if (fd < 0 || fstat(fd, &st) != 0) {
		int en = errno;
		if (en == ENOENT)
			connect_error_set(err, CONNECT_NOT_FOUND, "path %s not found: %s", r->path,
				fs_rpc_errno_text(en, t, sizeof t));
		else
			connect_error_set(err, CONNECT_INTERNAL, "error statting path %s: %s", r->path,
				fs_rpc_errno_text(en, t, sizeof t));
	} else if (!S_ISDIR(st.st_mode)) {
		connect_error_set(err, CONNECT_INVALID_ARGUMENT, "path %s not a directory", r->path);
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		if (root_fd >= 0)
			close(root_fd);
		return NULL;
	}
	close(fd);
	struct fs_watchers *ws = ctx->watchers;
	struct fs_watch *w = calloc(1, sizeof *w);
	if (w) {
		w->owner = ws;
		w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		snprintf(w->sandbox_id, sizeof w->sandbox_id, "%s", sb->id);
		snprintf(w->path, sizeof w->path, "%s", r->path);
		w->recursive = r->recursive;
		w->include_entry = r->include_entry;
		w->next = ws->list;
		ws->list = w;
	}
	if (!w || w->ifd < 0 || !(w->ev = event_new(ws->base, w->ifd, EV_READ | EV_PERSIST, on_inotify, w))) {
		if (w)
			watch_free(w);
		close(root_fd);
		connect_error_set(err, CONNECT_INTERNAL, "error creating watcher: %s", strerror(errno));
		return NULL;
	}
	add_dir(w, NULL, root_fd, r->path, "", 0);
	close(root_fd);
	event_add(w->ev, NULL);
	return w;
}

/* --- WatchDir ------------------------------------------------------------------ */

static void on_keepalive(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fs_watch *w = arg;
	struct evbuffer *buf = evbuffer_new();
	if (buf && connect_envelope_add(buf, 0, "{\"keepalive\":{}}", 16) == 0)
		evhttp_send_reply_chunk(w->req, buf);
	if (buf)
		evbuffer_free(buf);
	evtimer_add(w->keepalive, &w->keepalive_tv);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct connect_error err;
	connect_error_set(&err, CONNECT_DEADLINE_EXCEEDED, "context deadline exceeded");
	stream_end(arg, &err);
}

static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct fs_watch *w = arg;
	w->evcon = NULL;
	http_conn_gone_free_request(w->req);
	watch_free(w);
}

int fs_watch_rpc_watch_dir(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int st = connect_check_request(req, CONNECT_SERVER_STREAM);
	if (st)
		return st;
	struct connect_error err;
	struct watch_request r;
	cJSON *msg = connect_read_stream_request(req, &err);
	struct fs_watch *w = NULL;
	if (msg && parse_watch(req, sb, msg, &r, &err) == 0)
		w = watch_new(ctx, sb, &r, &err);
	cJSON_Delete(msg);
	if (!w)
		return connect_reply_stream_error(req, &err);
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	long long ka = connect_keepalive_ms(evhttp_find_header(in, "Keepalive-Ping-Interval"));
	const char *t = evhttp_find_header(in, "Connect-Timeout-Ms");
	long long timeout = t ? strtoll(t, NULL, 10) : 0;
	w->req = req;
	w->evcon = evhttp_request_get_connection(req);
	w->keepalive_tv.tv_sec = (time_t)(ka / 1000);
	w->keepalive_tv.tv_usec = (suseconds_t)(ka % 1000) * 1000;
	w->keepalive = evtimer_new(ctx->base, on_keepalive, w);
	w->deadline = timeout > 0 ? evtimer_new(ctx->base, on_deadline, w) : NULL;
	connect_stream_headers(req);
	evhttp_send_reply_start(req, 200, "OK");
	http_conn_set_closecb(w->evcon, on_client_gone, w);
	/* Quiet streams are legitimate: only writes are time-limited. */
	struct bufferevent *bev = evhttp_connection_get_bufferevent(w->evcon);
	struct timeval wtv = {.tv_sec = 60, .tv_usec = 0};
	bufferevent_set_timeouts(bev, NULL, &wtv);
	struct evbuffer *buf = evbuffer_new();
	if (buf && connect_envelope_add(buf, 0, "{\"start\":{}}", 12) == 0)
		evhttp_send_reply_chunk(req, buf);
	if (buf)
		evbuffer_free(buf);
	if (w->keepalive)
		evtimer_add(w->keepalive, &w->keepalive_tv);
	if (w->deadline) {
		struct timeval dtv = {.tv_sec = (time_t)(timeout / 1000),
			.tv_usec = (suseconds_t)(timeout % 1000) * 1000};
		evtimer_add(w->deadline, &dtv);
	}
	return 200;
}

/* --- CreateWatcher, GetWatcherEvents, RemoveWatcher -------------------------------- */

static cJSON *begin_unary(struct evhttp_request *req, int *status)
{
	int st = connect_check_request(req, CONNECT_UNARY);
	if (st) {
		*status = st;
		return NULL;
	}
	struct connect_error err;
	cJSON *msg = connect_read_unary(req, &err);
	if (!msg)
		*status = connect_reply_unary_error(req, &err);
	return msg;
}

int fs_watch_rpc_create(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int status = 0;
	cJSON *msg = begin_unary(req, &status);
	if (!msg)
		return status;
	struct connect_error err;
	struct watch_request r;
	struct fs_watch *w = NULL;
	if (parse_watch(req, sb, msg, &r, &err) == 0)
		w = watch_new(ctx, sb, &r, &err);
	cJSON_Delete(msg);
	if (w) {
		char hex[17];
		w->queue = cJSON_CreateArray();
		if (!w->queue || random_hex(hex, 16) != 0) {
			watch_free(w);
			w = NULL;
			connect_error_set(&err, CONNECT_INTERNAL, "out of memory");
		} else {
			snprintf(w->id, sizeof w->id, "w%s", hex);
		}
	}
	if (!w)
		return connect_reply_unary_error(req, &err);
	cJSON *answer = cJSON_CreateObject();
	cJSON_AddStringToObject(answer, "watcherId", w->id);
	return connect_reply_unary(req, answer);
}

static struct fs_watch *find_watcher(struct envd_ctx *ctx, const struct sandbox *sb,
	const cJSON *msg, struct connect_error *err)
{
	const char *id = "";
	if (protojson_string(msg, "watcherId", "watcher_id", &id, err) == PROTOJSON_BAD)
		return NULL;
	struct fs_watchers *ws = ctx->watchers;
	for (struct fs_watch *w = ws->list; w; w = w->next)
		if (w->queue && strcmp(w->id, id) == 0 && strcmp(w->sandbox_id, sb->id) == 0)
			return w;
	connect_error_set(err, CONNECT_NOT_FOUND, "watcher with id %.64s not found", id);
	return NULL;
}

/* The watcher a GetWatcherEvents or RemoveWatcher request names, or NULL
 * with the error answer sent (*status). */
static struct fs_watch *watcher_request(struct envd_ctx *ctx, struct evhttp_request *req,
	const struct sandbox *sb, int *status)
{
	cJSON *msg = begin_unary(req, status);
	if (!msg)
		return NULL;
	struct connect_error err;
	struct fs_watch *w = find_watcher(ctx, sb, msg, &err);
	cJSON_Delete(msg);
	if (!w)
		*status = connect_reply_unary_error(req, &err);
	return w;
}

int fs_watch_rpc_get_events(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int status = 0;
	struct fs_watch *w = watcher_request(ctx, req, sb, &status);
	if (!w)
		return status;
	/* Events already read by the kernel but not yet delivered to us. */
	on_inotify(w->ifd, EV_READ, w);
	cJSON *answer = cJSON_CreateObject();
	if (cJSON_GetArraySize(w->queue) > 0) {
		cJSON_AddItemToObject(answer, "events", w->queue);
		w->queue = cJSON_CreateArray();
	}
	return connect_reply_unary(req, answer);
}

int fs_watch_rpc_remove(struct envd_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int status = 0;
	struct fs_watch *w = watcher_request(ctx, req, sb, &status);
	if (!w)
		return status;
	watch_free(w);
	return connect_reply_unary(req, cJSON_CreateObject());
}
