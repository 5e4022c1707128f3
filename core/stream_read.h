/* stream_read.h — reading a stream: Connect envelopes, decoded
 * incrementally, become events; events become an exec.run result,
 * exec.output / exec.exit notifications, or files.watch answers and
 * files.event. These are the stream op's callbacks (op->owner is the
 * stream), set by stream_open.c. Calls stream.c, envd.c, calls.c, actions.c
 * and the codecs. */
#ifndef E2BW_STREAM_READ_H
#define E2BW_STREAM_READ_H

#include <stddef.h>
#include <stdint.h>

#include "cJSON.h"
#include "core_state.h"
#include "http_ops.h"

/* The stream op's callbacks (op->owner is the stream). */
void e2bw_stream_data(e2bw_core *core, e2bw_http_op *op, const uint8_t *data, size_t len);
void e2bw_stream_done(e2bw_core *core, e2bw_http_op *op);
void e2bw_stream_fail(e2bw_core *core, e2bw_http_op *op, cJSON *error);

#endif
