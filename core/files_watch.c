/* files_watch.c — files.watch / files.unwatch (ours): a directory followed
 * through envd's WatchDir stream, run by the same stream engine as process
 * output (stream.h: envelope decoding, keepalive liveness deadline, exactly
 * one ending). This file holds the handlers; the notifications' shapes are
 * in files_watch_events.c. */
#include <stdlib.h>
#include <string.h>

#include "envd.h"
#include "errors.h"
#include "files.h"
#include "files_watch.h"
#include "stream.h"
#include "stream_open.h"

static double next_watch_number(e2bw_core *core)
{
	return (double)++core->next_op_id;
}

static void watch_go(e2bw_core *core, e2bw_call *call)
{
	const char *path = e2bw_call_param_str(call, "path");
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "path", path);
	cJSON_AddBoolToObject(msg, "recursive",
		cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(call->params, "recursive")));
	e2bw_watch_open(core, call, msg, e2bw_files_user(call), path, next_watch_number(core));
}

void e2bw_files_watch(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, watch_go);
}

void e2bw_files_unwatch(e2bw_core *core, e2bw_call *call)
{
	const char *id = e2bw_call_param_str(call, "watch_id");
	double number = 0;
	int ok = id && id[0] == 'w' && id[1];
	for (const char *c = id ? id + 1 : ""; ok && *c; c++) {
		if (*c < '0' || *c > '9' || number > 1e15)
			ok = 0;
		else
			number = number * 10 + (*c - '0');
	}
	if (!ok || !e2bw_watch_close(core, e2bw_call_param_str(call, "sandbox_id"), number)) {
		cJSON *e = e2bw_error_new(E2BW_ERR_NOT_FOUND,
			"No watch '%.60s' in sandbox '%.128s' (it ended, or was never started here)",
			id ? id : "", e2bw_call_param_str(call, "sandbox_id"));
		e2bw_call_fail(core, call, e);
		return;
	}
	e2bw_call_succeed(core, call, cJSON_CreateObject());
}
