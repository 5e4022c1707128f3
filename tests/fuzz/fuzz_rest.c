/* libFuzzer target: backend answers, control plane and envd. One call is
 * made (the first byte picks which; exec and process calls find their
 * sandbox already known); then the input plays the backend for every request
 * the core issues: status, header block and body in chunks — envd streams
 * included — or a transport failure. Whatever arrives, once time runs out
 * every call has exactly one answer, and a started process exactly one
 * exec.exit. */
#include <stdio.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *calls[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.create\",\"params\":{\"template\":\"base\",\"timeout\":60,\"metadata\":{\"a\":\"b\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.list\",\"params\":{\"metadata\":{\"a\":\"b\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.list\",\"params\":{\"limit\":3}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.kill\",\"params\":{\"sandbox_id\":\"sbx1\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.connect\",\"params\":{\"sandbox_id\":\"sbx1\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.resume\",\"params\":{\"sandbox_id\":\"sbx1\",\"timeout\":30}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.set_timeout\",\"params\":{\"sandbox_id\":\"sbx1\",\"timeout\":30}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.pause\",\"params\":{\"sandbox_id\":\"sbx1\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exec.run\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"echo hi\",\"stdin\":\"x\",\"timeout\":3}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exec.start\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"yes\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exec.start\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"yes\",\"encoding\":\"base64\",\"timeout\":2}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"process.attach\",\"params\":{\"sandbox_id\":\"sbx1\",\"pid\":5}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pty.open\",\"params\":{\"sandbox_id\":\"sbx1\",\"cols\":80,\"rows\":24}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"process.list\",\"params\":{\"sandbox_id\":\"sbx1\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"process.stdin\",\"params\":{\"sandbox_id\":\"sbx1\",\"pid\":5,\"data\":\"x\",\"close\":true}}",
};
#define FIRST_ENVD_CALL 9

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  e2bw_core *core = e2bw_core_new();
  if (!core) return 0;
  e2bw_core_set_detach(core, data[0] >> 7); /* half the inputs: long strings leave detached */
  fuzz_state st = {0};
  fuzz_init(core, &st);
  size_t which = data[0] % (sizeof calls / sizeof calls[0]);
  const char *call = calls[which];
  st.nops = 0;
  if (which >= FIRST_ENVD_CALL) learn_sandbox(core, &st);
  e2bw_core_submit(core, call, strlen(call), 10);
  fuzz_drain(core, &st);
  reader r = {data + 1, size - 1};
  fuzz_play_backend(core, &st, &r);
  if (st.answers != 1) {
    fprintf(stderr, "call answered %d times\n", st.answers);
    abort();
  }
  /* a process that was started (answered with a pid) gets exactly one exec.exit */
  int streams = strstr(call, "exec.start") || strstr(call, "pty.open") || strstr(call, "process.attach");
  if (st.exits != (streams && st.ok ? 1 : 0)) {
    fprintf(stderr, "%d exec.exit for %s (ok=%d)\n", st.exits, call, st.ok);
    abort();
  }
  if (e2bw_core_next_deadline(core) != -1) abort();
  e2bw_core_free(core);
  return 0;
}
