/* libFuzzer target: the E2B template API's answers to templates.* — the
 * created template (TemplateRequestResponseV3), the upload link
 * (TemplateBuildFileUpload), the upload and the build start, the build's
 * status with its log entries and reason (TemplateBuildInfo), the template
 * list (Template[]). The first byte picks the call; the input then plays
 * the backend for every request, status polls included: status, header
 * block, body in chunks, or a transport failure; when all are served, time
 * moves on to the next poll. Whatever arrives, once
 * time runs out the call has exactly one answer, no timer or request is
 * left, and no message carries the API key or the registry password. */
#include <stdio.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BUILD "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"templates.build\",\"params\":{\"name\":\"t\","
static const char *calls[] = {
	BUILD
	"\"dockerfile\":\"FROM e2bdev/base\\nRUN make\\nCOPY a /a\\nCOPY d/* /d/\\nENV K=v\\nCMD [\\\"run\\\"]\","
	"\"context\":[{\"path\":\"a\",\"content\":\"aGkK\"},{\"path\":\"d/x\",\"content\":\"\",\"mode\":493}]}}",
	/* the registry password is the token fuzz_common.h checks never leaks */
	BUILD "\"from_image\":\"r.test/i:1\",\"registry\":{\"username\":\"u\",\"password\":\"" FUZZ_ENVD_TOKEN
	      "\"},"
	      "\"steps\":[{\"type\":\"RUN\",\"args\":[\"true\"]}],\"timeout\":2}}",
	BUILD "\"from_template\":\"base\",\"wait\":false,\"skip_cache\":true}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"templates.get\",\"params\":{\"template_id\":\"t\",\"build_id\":\"b\",\"logs_offset\":3}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"templates.list\",\"params\":{\"limit\":10}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"templates.delete\",\"params\":{\"template_id\":\"t\"}}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_state st = {0};
	e2bw_core *core = fuzz_core(data[0], &st);
	if (!core)
		return 0;
	e2bw_core_preview_feature(core, "templates.build");
	st.advance = 1; /* a build polls its status every 200 ms */
	size_t which = data[0] % (sizeof calls / sizeof calls[0]);
	st.tokened = which == 1; /* the call that gives the core this password */
	fuzz_one_call(core, &st, calls[which], 0, data + 1, size - 1);
	if (st.exits || st.watch_ends)
		abort();
	if (e2bw_core_next_deadline(core) != -1)
		abort();
	e2bw_core_free(core);
	return 0;
}
