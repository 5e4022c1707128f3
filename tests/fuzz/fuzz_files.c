/* libFuzzer target: envd's answers to the files calls — GET /files bodies
 * (content, Range, lengths), POST /files answers, filesystem RPC JSON
 * (EntryInfo lists), the WatchDir stream and the chmod process stream. The
 * first byte picks the call (the sandbox is already known); the input then
 * plays envd for every request: status, header block, body in chunks, or a
 * transport failure. Whatever arrives, once time runs out the call has
 * exactly one answer, and an answered files.watch exactly one
 * files.watch_end. */
#include <stdio.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define S "\"sandbox_id\":\"sbx1\""
static const char *calls[] = {
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.read\",\"params\":{" S ",\"path\":\"/a\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.read\",\"params\":{" S
	",\"path\":\"/a\",\"encoding\":\"base64\",\"offset\":3,\"length\":10}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.write\",\"params\":{" S
	",\"path\":\"/a\",\"content\":\"aGk=\",\"encoding\":\"base64\",\"mode\":416,\"owner\":\"agent\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.list\",\"params\":{" S
	",\"path\":\"/a\",\"depth\":3}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.stat\",\"params\":{" S ",\"path\":\"/a\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.mkdir\",\"params\":{" S ",\"path\":\"/a/b\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.move\",\"params\":{" S
	",\"source\":\"/a\",\"destination\":\"/b\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.search\",\"params\":{" S
	",\"path\":\"/a\",\"pattern\":\"*[a-c]?\",\"limit\":2}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.chmod\",\"params\":{" S
	",\"path\":\"/a\",\"mode\":493}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.watch\",\"params\":{" S
	",\"path\":\"/a\",\"recursive\":true}}",
};

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
	fuzz_one_call(core, &st, call, 1, data + 1, size - 1);
	/* an answered watch ends exactly once; nothing else notifies an end */
	int watch = strstr(call, "files.watch") != NULL;
	if (st.watch_ends != (watch && st.ok ? 1 : 0) || st.exits != 0) {
		fprintf(stderr, "%d files.watch_end, %d exec.exit for %s (ok=%d)\n", st.watch_ends, st.exits,
			call, st.ok);
		abort();
	}
	if (e2bw_core_next_deadline(core) != -1)
		abort();
	e2bw_core_free(core);
	return 0;
}
