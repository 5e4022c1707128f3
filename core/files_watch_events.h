/* files_watch_events.h — the shapes of what a watch sends (files.watch's
 * answer, files.event, files.watch_end): plain JSON builders, used by the
 * stream engine (stream.c, stream_read.c) below the handlers. */
#ifndef E2BW_FILES_WATCH_EVENTS_H
#define E2BW_FILES_WATCH_EVENTS_H

#include "cJSON.h"

cJSON *e2bw_watch_started(const char *sandbox_id, double watch_number, const char *dir);
cJSON *e2bw_watch_event_params(const char *request_id, const char *sandbox_id, double watch_number,
	const char *dir, const cJSON *fs_event);
cJSON *e2bw_watch_end_params(const char *request_id, const char *sandbox_id, double watch_number,
	cJSON *failure);

#endif
