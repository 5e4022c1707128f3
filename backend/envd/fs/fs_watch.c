/* inotify watchers for WatchDir and the CreateWatcher family (fs_watch.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_watch.h"

#include "envd/fs/fs_entry.h"
#include "envd/fs/fs_path.h"
#include "envd/fs/fs_rpc.h"
#include "envd/fs/fs_watch_table.h"
#include "http/http_connect.h"
#include "http/http_conns.h"
#include "http/http_protojson.h"
#include "http/http_request.h"
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

static struct sandbox_watches *sandbox_watches_get(struct fs_watchers *ws, const char *id)
{
	struct sandbox_watches *sw = ws->sandboxes;
	while (sw && strcmp(sw->sandbox_id, id) != 0)
		sw = sw->next;
	if (!sw && (sw = calloc(1, sizeof *sw)) != NULL) {
		snprintf(sw->sandbox_id, sizeof sw->sandbox_id, "%s", id);
		sw->budget.max = ws->max_watches;
		sw->next = ws->sandboxes;
		ws->sandboxes = sw;
	}
	if (sw)
		sw->users++;
	return sw;
}

static void sandbox_watches_put(struct fs_watchers *ws, struct sandbox_watches *sw)
{
	if (!sw || --sw->users > 0)
		return;
	for (struct sandbox_watches **pp = &ws->sandboxes; *pp; pp = &(*pp)->next) {
		if (*pp == sw) {
			*pp = sw->next;
			break;
		}
	}
	free(sw);
}

struct fs_watchers *fs_watchers_new(struct event_base *base, struct registry *reg, size_t max_watches)
{
	struct fs_watchers *w = calloc(1, sizeof *w);
	if (w) {
		w->base = base;
		w->reg = reg;
		w->max_watches = max_watches;
	}
	return w;
}

void fs_watch_free(struct fs_watch *w)
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
	if (w->tick)
		event_free(w->tick);
	if (w->ifd >= 0)
		close(w->ifd);
	fs_watch_dirs_clear(&w->dirs);
	cJSON_Delete(w->queue);
	if (w->sw)
		w->sw->events -= w->queued;
	sandbox_watches_put(w->owner, w->sw);
	free(w);
}

/* Ends a WatchDir stream (err NULL: a clean end) and frees the watch. */
static void stream_end(struct fs_watch *w, const struct err *err)
{
	if (w->evcon && w->req) {
		struct evbuffer *buf = evbuffer_new();
		if (buf) {
			connect_end_stream_add(buf, err);
			evhttp_send_reply_chunk(w->req, buf);
			evbuffer_free(buf);
		}
		http_conn_set_closecb(w->evcon, NULL, NULL);
		evhttp_send_reply_end(w->req);
	}
	fs_watch_free(w);
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
		fs_watch_free(w);
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
		if (ws->list->stream && ws->list->ready)
			stream_end(ws->list, NULL);
		else
			fs_watch_free(ws->list);
	}
	free(ws);
}

static void emit(struct fs_watch *w, cJSON *event);
static void emit_event(struct fs_watch *w, struct sandbox *sb, int root_fd, const char *rel, const char *full,
	const char *type, bool entry);
static void schedule(struct fs_watch *w);

/* A CreateWatcher watcher at a limit: its watches and events are given
 * back at once, and the next GetWatcherEvents answers why (never a watcher
 * that goes on answering nothing). */
static void drop(struct fs_watch *w, const struct err *why)
{
	w->dropped = true;
	w->drop_reason = *why;
	if (w->ev)
		event_del(w->ev);
	if (w->tick)
		event_del(w->tick);
	fs_watch_dirs_clear(&w->dirs);
	cJSON_Delete(w->queue);
	w->queue = NULL;
	w->sw->events -= w->queued;
	w->queued = 0;
}

/* A watcher that hit a limit after it was answered: a stream ends with
 * the error, a queue watcher is dropped with it. */
static void fail(struct fs_watch *w, const struct err *err)
{
	if (w->stream)
		stream_end(w, err);
	else
		drop(w, err);
}

static void emit(struct fs_watch *w, cJSON *event)
{
	if (!w->stream) {
		if (w->dropped) {
			cJSON_Delete(event);
			return;
		}
		if (w->queued >= FS_WATCH_QUEUE_MAX || w->sw->events >= FS_WATCH_SANDBOX_EVENTS_MAX) {
			cJSON_Delete(event);
			struct err err;
			err_set(&err, CONNECT_RESOURCE_EXHAUSTED,
				"watcher %s was dropped: its events were not read (at most %d unread per "
				"watcher, %d per sandbox)",
				w->id, FS_WATCH_QUEUE_MAX, FS_WATCH_SANDBOX_EVENTS_MAX);
			drop(w, &err);
			return;
		}
		cJSON_AddItemToArray(w->queue, event);
		w->queued++;
		w->sw->events++;
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
static void emit_event(struct fs_watch *w, struct sandbox *sb, int root_fd, const char *rel, const char *full,
	const char *type, bool entry)
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

struct announce_ctx {
	struct fs_watch *w;
	struct sandbox *sb;
	int root_fd;
};

/* What a new subdirectory held before its watch existed (fs_watch_dirs.h). */
static void announce(void *arg, const char *rel, const char *full, const char *type)
{
	struct announce_ctx *a = arg;
	emit_event(a->w, a->sb, a->root_fd, rel, full, type, true);
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
	bool root_gone = false, walk = false;
	struct err err;
	bool failed = false;
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
	for (char *p = buf; p < buf + n && !w->dropped && !failed;) {
		struct inotify_event *ie = (struct inotify_event *)p;
		p += sizeof *ie + ie->len;
		if (ie->mask & IN_Q_OVERFLOW) {
			err_set(&err, CONNECT_RESOURCE_EXHAUSTED,
				"the host's inotify event queue "
				"overflowed (fs.inotify.max_queued_events): events were lost");
			failed = true;
			break;
		}
		const char *base = fs_watch_dirs_rel(&w->dirs, ie->wd);
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
		/* After the directory's own event, what it already holds: queued
		 * for the walk, in slices like the first one. */
		if (w->dirs.recursive && (ie->mask & IN_ISDIR) && (ie->mask & (IN_CREATE | IN_MOVED_TO)) &&
			sb && !w->dropped) {
			if (fs_watch_dirs_push(&w->dirs, full, rel, true, &err) != 0)
				failed = true;
			else
				walk = true;
		}
	}
	if (root_fd >= 0)
		close(root_fd);
	if (failed) {
		fail(w, &err);
		return;
	}
	if (walk)
		schedule(w);
	if (w->stream && w->evcon &&
		evbuffer_get_length(bufferevent_get_output(evhttp_connection_get_bufferevent(w->evcon))) >
			FS_WATCH_STREAM_HIGH_WATER) {
		err_set(&err, CONNECT_RESOURCE_EXHAUSTED, "watch events are not being read");
		stream_end(w, &err);
		return;
	}
	if (root_gone) {
		if (w->stream)
			stream_end(w, NULL);
		else if (!sb)
			fs_watch_free(w); /* the sandbox is gone: nobody can drain it */
	}
}

/* User, message fields, and the directory check (envd's codes). */
int fs_watch_parse(struct evhttp_request *req, struct sandbox *sb, const cJSON *msg, struct watch_request *r,
	struct err *err)
{
	struct fs_user u;
	const char *raw = "";
	bool network = false;
	r->recursive = r->include_entry = false;
	if (fs_rpc_user(req, sb, &u, err) != 0 ||
		protojson_string(msg, "path", "path", &raw, err) == PROTOJSON_BAD ||
		protojson_bool(msg, "recursive", "recursive", &r->recursive, err) == PROTOJSON_BAD ||
		protojson_bool(msg, "includeEntry", "include_entry", &r->include_entry, err) ==
			PROTOJSON_BAD ||
		protojson_bool(msg, "allowNetworkMounts", "allow_network_mounts", &network, err) ==
			PROTOJSON_BAD ||
		fs_rpc_path(raw, &u, r->path, sizeof r->path, err) != 0)
		return -1;
	return 0;
}

/* --- the walk ------------------------------------------------------------------ */

static void answer_ready(struct fs_watch *w);

/* The first walk's failure: its request gets the error, the watch goes. */
static void answer_failed(struct fs_watch *w, const struct err *err)
{
	http_conn_set_closecb(w->evcon, NULL, NULL);
	int status =
		w->stream ? connect_reply_stream_error(w->req, err) : connect_reply_unary_error(w->req, err);
	request_log("envd", w->req, status);
	fs_watch_free(w);
}

static void walk_step(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fs_watch *w = arg;
	struct sandbox *sb = registry_find(w->owner->reg, w->sandbox_id);
	struct err err;
	if (!sb)
		return; /* the removing hook frees the watch */
	int root_fd = fs_root_open(sb);
	struct announce_ctx a = {.w = w, .sb = sb, .root_fd = root_fd};
	int rc = root_fd >= 0 ? fs_watch_dirs_step(&w->dirs, root_fd, announce, &a, &err) : -1;
	if (root_fd >= 0)
		close(root_fd);
	else
		err_set(&err, CONNECT_INTERNAL, "cannot open the sandbox's root");
	if (rc != 0) {
		if (!w->ready)
			answer_failed(w, &err);
		else
			fail(w, &err);
		return;
	}
	if (w->dirs.ntodo > 0)
		schedule(w);
	else if (!w->ready)
		answer_ready(w);
}

/* A zero timer, not event_base_once: the next slice waits for the next
 * loop turn, so other clients are served between slices (as in fs_list.c). */
static void schedule(struct fs_watch *w)
{
	struct timeval now = {0, 0};
	if (!w->dropped)
		evtimer_add(w->tick, &now);
}

static void on_client_gone(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct fs_watch *w = arg;
	w->evcon = NULL;
	http_conn_gone_free_request(w->req);
	fs_watch_free(w);
}

/* Checks the directory and starts its walk; answer_ready answers once the
 * walk is done, answer_failed if it fails. */
struct fs_watch *fs_watch_new(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb,
	const struct watch_request *r, bool stream, struct err *err)
{
	int root_fd = fs_root_open(sb);
	int fd = root_fd >= 0 ? fs_open(root_fd, r->path, O_PATH, 0, false) : -1;
	struct stat st;
	char t[128];
	if (fd < 0 || fstat(fd, &st) != 0) {
		int en = errno;
		if (en == ENOENT)
			err_set(err, CONNECT_NOT_FOUND, "path %s not found: %s", r->path,
				fs_rpc_errno_text(en, t, sizeof t));
		else
			err_set(err, CONNECT_INTERNAL, "error statting path %s: %s", r->path,
				fs_rpc_errno_text(en, t, sizeof t));
	} else if (!S_ISDIR(st.st_mode)) {
		err_set(err, CONNECT_INVALID_ARGUMENT, "path %s not a directory", r->path);
		close(fd);
		fd = -1;
	}
	if (root_fd >= 0)
		close(root_fd);
	if (fd < 0)
		return NULL;
	close(fd);
	struct fs_watchers *ws = ctx->watchers;
	struct fs_watch *w = calloc(1, sizeof *w);
	if (!w) {
		err_set(err, CONNECT_INTERNAL, "out of memory");
		return NULL;
	}
	w->owner = ws;
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	int en = errno;
	snprintf(w->sandbox_id, sizeof w->sandbox_id, "%s", sb->id);
	snprintf(w->path, sizeof w->path, "%s", r->path);
	w->stream = stream;
	w->include_entry = r->include_entry;
	w->dirs.ifd = w->ifd;
	w->dirs.recursive = r->recursive;
	w->dirs.budget = (w->sw = sandbox_watches_get(ws, sb->id)) ? &w->sw->budget : NULL;
	w->next = ws->list;
	ws->list = w;
	if (w->ifd < 0 && (en == EMFILE || en == ENFILE))
		err_set(err, CONNECT_RESOURCE_EXHAUSTED,
			en == EMFILE
				? "the host's limit of inotify instances is reached (fs.inotify.max_user_instances)"
				: "the host's limit of open files is reached");
	else if (w->ifd < 0 || !w->sw || (!stream && !(w->queue = cJSON_CreateArray())) ||
		!(w->ev = event_new(ws->base, w->ifd, EV_READ | EV_PERSIST, on_inotify, w)) ||
		!(w->tick = evtimer_new(ws->base, walk_step, w)))
		err_set(err, CONNECT_INTERNAL, "error creating watcher: %s", strerror(en));
	else if (fs_watch_dirs_push(&w->dirs, r->path, "", false, err) == 0) {
		w->req = req;
		w->evcon = evhttp_request_get_connection(req);
		http_conn_set_closecb(w->evcon, on_client_gone, w);
		schedule(w);
		return w;
	}
	fs_watch_free(w);
	return NULL;
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
	struct err err;
	err_set(&err, CONNECT_DEADLINE_EXCEEDED, "context deadline exceeded");
	stream_end(arg, &err);
}

/* The stream's start, once every directory is watched. */
static void stream_start(struct fs_watch *w)
{
	struct evhttp_request *req = w->req;
	struct evkeyvalq *in = evhttp_request_get_input_headers(req);
	long long ka = connect_keepalive_ms(evhttp_find_header(in, "Keepalive-Ping-Interval"));
	const char *t = evhttp_find_header(in, "Connect-Timeout-Ms");
	long long timeout = t ? strtoll(t, NULL, 10) : 0;
	w->keepalive_tv.tv_sec = (time_t)(ka / 1000);
	w->keepalive_tv.tv_usec = (suseconds_t)(ka % 1000) * 1000;
	w->keepalive = evtimer_new(w->owner->base, on_keepalive, w);
	w->deadline = timeout > 0 ? evtimer_new(w->owner->base, on_deadline, w) : NULL;
	connect_stream_headers(req);
	evhttp_send_reply_start(req, 200, "OK");
	request_log("envd", req, 200);
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
}

int fs_watch_rpc_watch_dir(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int st = connect_check_request(req, CONNECT_SERVER_STREAM);
	if (st)
		return st;
	struct err err;
	struct watch_request r;
	cJSON *msg = connect_read_stream_request(req, &err);
	struct fs_watch *w = NULL;
	if (msg && fs_watch_parse(req, sb, msg, &r, &err) == 0)
		w = fs_watch_new(ctx, req, sb, &r, true, &err);
	cJSON_Delete(msg);
	if (!w)
		return connect_reply_stream_error(req, &err);
	return FS_STATUS_PENDING;
}

/* --- CreateWatcher, GetWatcherEvents, RemoveWatcher -------------------------------- */

static void answer_ready(struct fs_watch *w)
{
	w->ready = true;
	event_add(w->ev, NULL);
	if (w->stream) {
		stream_start(w);
		return;
	}
	char hex[17];
	struct evhttp_request *req = w->req;
	http_conn_set_closecb(w->evcon, NULL, NULL);
	w->req = NULL;
	w->evcon = NULL;
	if (random_hex(hex, 16) != 0) {
		struct err err;
		err_set(&err, CONNECT_INTERNAL, "out of memory");
		request_log("envd", req, connect_reply_unary_error(req, &err));
		fs_watch_free(w);
		return;
	}
	snprintf(w->id, sizeof w->id, "w%s", hex);
	cJSON *answer = cJSON_CreateObject();
	cJSON_AddStringToObject(answer, "watcherId", w->id);
	request_log("envd", req, connect_reply_unary(req, answer));
}

void fs_watch_read(struct fs_watch *w)
{
	on_inotify(w->ifd, EV_READ, w);
}
