/* files_watch_events.c — the shapes of what a watch sends (files.watch's
 * answer, files.event, files.watch_end): plain JSON builders, used by the
 * stream engine (stream.c, stream_read.c) below the handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files_watch_events.h"

static void add_watch_id(cJSON *o, double watch_number)
{
	char id[32];
	snprintf(id, sizeof id, "w%.0f", watch_number);
	cJSON_AddStringToObject(o, "watch_id", id);
}

cJSON *e2bw_watch_started(const char *sandbox_id, double watch_number, const char *dir)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "sandbox_id", sandbox_id);
	add_watch_id(r, watch_number);
	cJSON_AddStringToObject(r, "path", dir);
	return r;
}

static const char *event_type(const cJSON *t)
{
	static const char *const names[] = {NULL, "create", "write", "remove", "rename", "chmod"};
	static const char *const enums[] = {NULL, "EVENT_TYPE_CREATE", "EVENT_TYPE_WRITE",
		"EVENT_TYPE_REMOVE", "EVENT_TYPE_RENAME", "EVENT_TYPE_CHMOD"};
	if (cJSON_IsNumber(t) && t->valuedouble >= 1 && t->valuedouble <= 5)
		return names[(int)t->valuedouble];
	if (cJSON_IsString(t))
		for (int i = 1; i <= 5; i++)
			if (strcmp(t->valuestring, enums[i]) == 0)
				return names[i];
	return NULL;
}

cJSON *e2bw_watch_event_params(const char *request_id, const char *sandbox_id, double watch_number,
	const char *dir, const cJSON *fs_event)
{
	const char *type = event_type(cJSON_GetObjectItemCaseSensitive(fs_event, "type"));
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(fs_event, "name");
	if (!type || !cJSON_IsString(name))
		return NULL; /* unknown kinds are skipped, as protobuf readers do */
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "sandbox_id", sandbox_id);
	cJSON_AddItemToObject(p, "request_id", cJSON_CreateRaw(request_id));
	add_watch_id(p, watch_number);
	cJSON_AddStringToObject(p, "type", type);
	cJSON_AddStringToObject(p, "name", name->valuestring);
	/* name is relative to the watched directory (docs/e2b-protocol-notes.md,
   * "Filesystem service") */
	size_t n = strlen(dir);
	char *path = malloc(n + strlen(name->valuestring) + 2);
	if (path) {
		sprintf(path, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name->valuestring);
		cJSON_AddStringToObject(p, "path", path);
		free(path);
	}
	return p;
}

cJSON *e2bw_watch_end_params(const char *request_id, const char *sandbox_id, double watch_number,
	cJSON *failure)
{
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "sandbox_id", sandbox_id);
	cJSON_AddItemToObject(p, "request_id", cJSON_CreateRaw(request_id));
	add_watch_id(p, watch_number);
	const char *kind = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(failure, "data"), "kind"));
	if (!failure || (kind && strcmp(kind, "canceled") == 0)) {
		cJSON_AddStringToObject(p, "reason", "cancelled");
		cJSON_Delete(failure);
	} else {
		cJSON_AddStringToObject(p, "reason", "failure");
		cJSON_AddItemToObject(p, "failure", failure);
	}
	return p;
}
