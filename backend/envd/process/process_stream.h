/* The HTTP side of Start and Connect: one chunked application/connect+json
 * answer per subscriber, with keepalives, a Connect-Timeout-Ms deadline,
 * backpressure towards the process, and clean detachment when the client
 * goes away. Calls the manager (reading on or off, killing on a Start's
 * deadline), the timer, http/ and lib/; the manager reaches these streams
 * only through the ops this file gives it. */
#ifndef E2B_BACKEND_PROCESS_STREAM_H
#define E2B_BACKEND_PROCESS_STREAM_H

#include "envd/process/process_table.h"

/* Answers req with a stream subscribed to p: 200, the start event, then
 * whatever p produces. deadline_ms 0 = none; kill_on_deadline for Start. */
int process_stream_open(struct proc *p, struct evhttp_request *req, int64_t keepalive_ms, int64_t deadline_ms,
	bool kill_on_deadline);
/* A retained (ended) process: start, end, end-stream in one answer. */
int process_stream_replay(struct proc *p, struct evhttp_request *req);
/* What the manager calls on a process's streams (process_manager_new). */
const struct process_stream_ops *process_stream_ops(void);

#endif
