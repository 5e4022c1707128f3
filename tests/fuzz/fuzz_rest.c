/* libFuzzer target: backend answers, control plane and envd. One call is
 * made (the first byte picks which; exec, process and code calls find
 * their sandbox already known); then the input plays the backend for every request
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
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"code.run\",\"params\":{\"sandbox_id\":\"sbx1\",\"code\":\"x\",\"envs\":{\"A\":\"b\"},\"timeout\":3}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"code.context.list\",\"params\":{\"sandbox_id\":\"sbx1\"}}",
};
#define FIRST_ENVD_CALL 9

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_state st = {0};
	e2bw_core *core = fuzz_core(data[0], &st);
	if (!core)
		return 0;
	size_t which = data[0] % (sizeof calls / sizeof calls[0]);
	const char *call = calls[which];
	fuzz_one_call(core, &st, call, which >= FIRST_ENVD_CALL, data + 1, size - 1);
	/* a process that was started (answered with a pid) gets exactly one exec.exit */
	int streams =
		strstr(call, "exec.start") || strstr(call, "pty.open") || strstr(call, "process.attach");
	if (st.exits != (streams && st.ok ? 1 : 0)) {
		fprintf(stderr, "%d exec.exit for %s (ok=%d)\n", st.exits, call, st.ok);
		abort();
	}
	if (e2bw_core_next_deadline(core) != -1)
		abort();
	e2bw_core_free(core);
	return 0;
}
