/* handshake.h — the EPP handshake's two handlers: initialize (the config,
 * the features, the limits) and shutdown (every other call and stream ends
 * with its one answer). The method table (methods.c) names them and hands
 * initialize the feature list it derives, so this file never calls back up
 * into the table. Calls config.c, calls.c, stream.c and the codecs. */
#ifndef E2BW_HANDSHAKE_H
#define E2BW_HANDSHAKE_H

#include "cJSON.h"
#include "calls.h"
#include "core_state.h"

/* The provider id initialize reports (and E8004 messages name). */
#define E2BW_PROVIDER_ID "e2b-wasm"

/* Answers initialize; features() gives the feature list to declare (a new
 * array, or NULL when out of memory). */
void e2bw_handshake_initialize(e2bw_core *core, e2bw_call *call, cJSON *(*features)(void));
/* Initializes the core with config (the host's own, for a host that sends
 * no initialize): NULL, or the error the request that needed it gets. */
cJSON *e2bw_handshake_configure(e2bw_core *core, const cJSON *config);
void e2bw_handshake_shutdown(e2bw_core *core, e2bw_call *call);

#endif
