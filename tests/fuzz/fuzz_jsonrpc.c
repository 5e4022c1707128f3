/* libFuzzer target: EPP/1 input as NDJSON bytes, fed in pieces whose size
 * the first byte chooses. Every output must stay a valid JSON-RPC message
 * (fuzz_common.h) and nothing may crash or leak. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	e2bw_core *core = e2bw_core_new();
	fuzz_state st = {0};
	if (!core)
		return 0;
	size_t step = size ? (size_t)data[0] % 17 + 1 : 1;
	int initialized = size > 1 && (data[1] & 1);
	if (initialized)
		fuzz_init(core, &st);
	const uint8_t *p = data + (size > 2 ? 2 : size);
	size_t left = size > 2 ? size - 2 : 0;
	while (left) {
		size_t n = left < step ? left : step;
		e2bw_core_ndjson_feed(core, (const char *)p, n, 1);
		fuzz_drain(core, &st);
		p += n;
		left -= n;
	}
	e2bw_core_ndjson_end(core, 2);
	fuzz_drain(core, &st);
	/* the whole input again as one submitted message */
	e2bw_core_submit(core, (const char *)data, size, 3);
	fuzz_drain(core, &st);
	e2bw_core_free(core);
	return 0;
}
