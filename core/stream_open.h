/* stream_open.h — opening a stream for a call: exec.run, exec.start,
 * pty.open and process.attach (through e2bw_stream_open), the internal runs
 * of files.chmod, and files.watch's WatchDir streams. Calls stream_read.c
 * (the op's callbacks), stream.c, envd.c and the codecs. */
#ifndef E2BW_STREAM_OPEN_H
#define E2BW_STREAM_OPEN_H

#include "cJSON.h"
#include "stream.h"

/* Starts a Start or Connect stream for the call, as the call's user (takes message). */
void e2bw_stream_open(e2bw_core *core, e2bw_call *call, int kind, const char *rpc, cJSON *message,
	double timeout_s);
/* Runs a StartRequest for the call as `user` and hands the exec.run-shaped
 * result (exit_code, stdout, stderr as text) to done instead of answering;
 * failures fail the call. */
void e2bw_run_internal(e2bw_core *core, e2bw_call *call, cJSON *start_message, const char *user,
	double timeout_s, e2bw_run_done_fn done);
/* Follows a WatchDir stream for files.watch (answered at envd's start event). */
void e2bw_watch_open(e2bw_core *core, e2bw_call *call, cJSON *watch_message, const char *user,
	const char *dir, double watch_number);
/* Ends a watch with files.watch_end (cancelled). 0 when there is no such watch. */
int e2bw_watch_close(e2bw_core *core, const char *sandbox_id, double watch_number);

#endif
