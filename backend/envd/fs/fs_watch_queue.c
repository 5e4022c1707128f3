/* CreateWatcher, GetWatcherEvents and RemoveWatcher (fs_watch_queue.h). */
#include "envd/fs/fs_watch_queue.h"

#include "envd/fs/fs_watch_table.h"
#include "http/http_protojson.h"

#include <cJSON.h>
#include <string.h>

static cJSON *begin_unary(struct evhttp_request *req, int *status)
{
	int st = connect_check_request(req, CONNECT_UNARY);
	if (st) {
		*status = st;
		return NULL;
	}
	struct err err;
	cJSON *msg = connect_read_unary(req, &err);
	if (!msg)
		*status = connect_reply_unary_error(req, &err);
	return msg;
}

int fs_watch_rpc_create(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int status = 0;
	cJSON *msg = begin_unary(req, &status);
	if (!msg)
		return status;
	struct err err;
	struct watch_request r;
	struct fs_watch *w = NULL;
	if (fs_watch_parse(req, sb, msg, &r, &err) == 0)
		w = fs_watch_new(ctx, req, sb, &r, false, &err);
	cJSON_Delete(msg);
	if (!w)
		return connect_reply_unary_error(req, &err);
	return FS_STATUS_PENDING;
}

static struct fs_watch *find_watcher(struct fs_ctx *ctx, const struct sandbox *sb, const cJSON *msg,
	struct err *err)
{
	const char *id = "";
	if (protojson_string(msg, "watcherId", "watcher_id", &id, err) == PROTOJSON_BAD)
		return NULL;
	struct fs_watchers *ws = ctx->watchers;
	for (struct fs_watch *w = ws->list; w; w = w->next)
		if (!w->stream && w->ready && strcmp(w->id, id) == 0 && strcmp(w->sandbox_id, sb->id) == 0)
			return w;
	err_set(err, CONNECT_NOT_FOUND, "watcher with id %.64s not found", id);
	return NULL;
}

/* The watcher a GetWatcherEvents or RemoveWatcher request names, or NULL
 * with the error answer sent (*status). */
static struct fs_watch *watcher_request(struct fs_ctx *ctx, struct evhttp_request *req,
	const struct sandbox *sb, int *status)
{
	cJSON *msg = begin_unary(req, status);
	if (!msg)
		return NULL;
	struct err err;
	struct fs_watch *w = find_watcher(ctx, sb, msg, &err);
	cJSON_Delete(msg);
	if (!w)
		*status = connect_reply_unary_error(req, &err);
	return w;
}

int fs_watch_rpc_get_events(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int status = 0;
	struct fs_watch *w = watcher_request(ctx, req, sb, &status);
	if (!w)
		return status;
	/* Events already read by the kernel but not yet delivered to us. */
	if (!w->dropped)
		fs_watch_read(w);
	if (w->dropped) {
		/* Said once; the watcher is gone after this answer. */
		struct err err = w->drop_reason;
		fs_watch_free(w);
		return connect_reply_unary_error(req, &err);
	}
	cJSON *answer = cJSON_CreateObject();
	if (w->queued > 0) {
		cJSON_AddItemToObject(answer, "events", w->queue);
		w->queue = cJSON_CreateArray();
		w->sw->events -= w->queued;
		w->queued = 0;
	}
	return connect_reply_unary(req, answer);
}

int fs_watch_rpc_remove(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb)
{
	int status = 0;
	struct fs_watch *w = watcher_request(ctx, req, sb, &status);
	if (!w)
		return status;
	fs_watch_free(w);
	return connect_reply_unary(req, cJSON_CreateObject());
}
