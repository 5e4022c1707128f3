/* initialize, feature gating, parameter validation, shutdown. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

static int has_feature(const cJSON *features, const char *name)
{
	const cJSON *f;
	cJSON_ArrayForEach(f, features)
		if (cJSON_IsString(f) && !strcmp(f->valuestring, name))
			return 1;
	return 0;
}

static void expect_param_error(harness *h, const char *method, const char *params, const char *field)
{
	char msg[1024];
	snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"%s\",\"params\":%s}", method,
		params);
	h_submit(h, msg);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	const cJSON *f =
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"), "field");
	CHECK(cJSON_IsString(f) && !strcmp(f->valuestring, field));
	if (!(cJSON_IsString(f) && !strcmp(f->valuestring, field)))
		fprintf(stderr, "    for %s %s: %s\n", method, params, h_send_text_last(h));
	CHECK(h->nhttp == h->http_pos); /* rejected before any request */
}

void suite_dispatch(void)
{
	harness *h = h_new();
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocol\":\"epp/1\",\"provider_id\":\"e2b-wasm\","
		"\"host\":{\"name\":\"abx\"},\"locale\":\"en\",\"config\":" H_CONFIG "}}");
	cJSON *r = h_send(h);
	const cJSON *res = h_result(r);
	CHECK(res != NULL);
	CHECK_STR(cJSON_GetObjectItem(res, "protocol")->valuestring, "epp/1");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "provider"), "id")->valuestring, "e2b-wasm");
	const cJSON *features = cJSON_GetObjectItem(res, "features");
	CHECK_NUM(cJSON_GetArraySize(features), 9); /* exactly what is implemented */
	CHECK(has_feature(features, "sandbox.lifecycle"));
	CHECK(has_feature(features, "sandbox.timeout"));
	CHECK(has_feature(features, "sandbox.pause"));
	CHECK(has_feature(features, "exec.run"));
	CHECK(has_feature(features, "exec.stream"));
	CHECK(has_feature(features, "process.manage"));
	/* pty.* are optional methods of exec.stream (docs/plugin-contract.md) */
	CHECK(!has_feature(features, "pty"));
	CHECK(has_feature(features, "files.rw"));
	CHECK(has_feature(features, "templates.build"));
	CHECK(has_feature(features, "ports.url"));
	CHECK_NUM(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "limits"), "max_message_bytes")->valuedouble,
		E2BW_MAX_MESSAGE_BYTES);
	CHECK_NUM(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "limits"), "request_timeout")->valuedouble,
		10);

	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"config\":" H_CONFIG
		"}}");
	CHECK_NUM(h_error_code(h_send(h)), -32600);

	/* every method of the table has a handler now: -32003 has no caller left
   * (it stays in the error table for methods a later table row may add) */

	expect_param_error(h, "sandbox.get", "{}", "sandbox_id");
	expect_param_error(h, "sandbox.get", "{\"sandbox_id\":12}", "sandbox_id");
	expect_param_error(h, "sandbox.get", "{\"sandbox_id\":\"../etc\"}", "sandbox_id");
	expect_param_error(h, "sandbox.get", "{\"sandbox_id\":\"\"}", "sandbox_id");
	expect_param_error(h, "sandbox.kill", "{\"sandbox_id\":\"a b\"}", "sandbox_id");
	expect_param_error(h, "sandbox.create", "{\"template\":5}", "template");
	expect_param_error(h, "sandbox.create", "{\"timeout\":-1}", "timeout");
	expect_param_error(h, "sandbox.create", "{\"timeout\":\"60\"}", "timeout");
	expect_param_error(h, "sandbox.create", "{\"metadata\":{\"a\":1}}", "metadata.a");
	expect_param_error(h, "sandbox.create", "{\"metadata\":[]}", "metadata");
	expect_param_error(h, "sandbox.create", "{\"envs\":{\"A\":true}}", "envs.A");
	/* resources are accepted (a host may always forward them); only what
   * cannot be honoured is refused, naming the field */
	expect_param_error(h, "sandbox.create", "{\"cpu\":0}", "cpu");
	expect_param_error(h, "sandbox.create", "{\"memory\":512.5}", "memory");
	expect_param_error(h, "sandbox.create", "{\"disk\":\"1G\"}", "disk");
	expect_param_error(h, "sandbox.create", "{\"gpu\":1}", "gpu");
	expect_param_error(h, "sandbox.create", "{\"gpu\":\"a100\"}", "gpu");
	expect_param_error(h, "sandbox.create", "{\"secure\":\"yes\"}", "secure");
	expect_param_error(h, "sandbox.create", "{\"options\":{\"bogus\":1}}", "options.bogus");
	expect_param_error(h, "sandbox.create", "{\"options\":{\"auto_pause\":1}}", "options.auto_pause");
	expect_param_error(h, "sandbox.create", "{\"request_timeout\":false}", "request_timeout");
	expect_param_error(h, "sandbox.list", "{\"limit\":0}", "limit");
	expect_param_error(h, "sandbox.list", "{\"limit\":1.5}", "limit");
	expect_param_error(h, "sandbox.list", "{\"state\":\"dead\"}", "state");
	expect_param_error(h, "sandbox.list", "{\"state\":[]}", "state");
	expect_param_error(h, "sandbox.list", "{\"state\":[\"running\",3]}", "state");
	expect_param_error(h, "sandbox.set_timeout", "{\"sandbox_id\":\"abc\"}", "timeout");
	expect_param_error(h, "sandbox.set_timeout", "{\"sandbox_id\":\"abc\",\"timeout\":1e12}", "timeout");
	expect_param_error(h, "sandbox.connect", "{\"sandbox_id\":\"abc\",\"timeout\":true}", "timeout");
	expect_param_error(h, "exec.run", "{\"sandbox_id\":\"abc\"}", "command");
	expect_param_error(h, "exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"\"}", "command");
	expect_param_error(h, "exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"stdin\":true}",
		"stdin");
	expect_param_error(h, "exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"encoding\":\"hex\"}",
		"encoding");
	expect_param_error(h, "exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"user\":\"a:b\"}",
		"user");
	expect_param_error(h, "exec.start", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"stdin\":\"x\"}",
		"stdin");
	expect_param_error(h, "process.kill", "{\"sandbox_id\":\"abc\"}", "pid");
	expect_param_error(h, "process.kill", "{\"sandbox_id\":\"abc\",\"pid\":0}", "pid");
	expect_param_error(h, "process.kill", "{\"sandbox_id\":\"abc\",\"pid\":1.5}", "pid");
	expect_param_error(h, "process.kill", "{\"sandbox_id\":\"abc\",\"pid\":\"12a\"}", "pid");
	expect_param_error(h, "process.kill", "{\"sandbox_id\":\"abc\",\"pid\":4294967296}", "pid");
	expect_param_error(h, "process.signal", "{\"sandbox_id\":\"abc\",\"pid\":5,\"signal\":\"SIGHUP\"}",
		"signal");
	expect_param_error(h, "pty.open", "{\"sandbox_id\":\"abc\",\"cols\":80}", "rows");
	expect_param_error(h, "pty.open", "{\"sandbox_id\":\"abc\",\"cols\":0,\"rows\":24}", "cols");
	expect_param_error(h, "pty.resize", "{\"sandbox_id\":\"abc\",\"pid\":5,\"cols\":80,\"rows\":70000}",
		"rows");
	expect_param_error(h, "pty.input", "{\"sandbox_id\":\"abc\",\"pid\":5}", "data");

	/* a near miss of a parameter's name is refused, naming the one meant
   * (a typo, another case or word style); other unknown members are
   * extensions and stay ignored */
	static const struct {
		const char *method, *params, *given, *meant;
	} near[] = {
		{"exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"sleep 2\",\"timout\":1}", "timout",
			"timeout"},
		{"exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"Timeout\":1}", "Timeout",
			"timeout"},
		{"exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"requestTimeout\":1}",
			"requestTimeout", "request_timeout"},
		{"exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"cdw\":\"/\"}", "cdw", "cwd"},
		{"exec.run", "{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"env\":{}}", "env", "envs"},
		{"sandbox.get", "{\"sandboxId\":\"abc\"}", "sandboxId", "sandbox_id"},
		{"sandbox.create", "{\"templte\":\"base\"}", "templte", "template"},
		{"files.write",
			"{\"sandbox_id\":\"abc\",\"path\":\"/a\",\"content\":\"x\",\"encodnig\":\"base64\"}",
			"encodnig", "encoding"},
		{"sandbox.list", "{\"next-token\":\"t\"}", "next-token", "next_token"},
	};
	for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
		expect_param_error(h, near[i].method, near[i].params, near[i].given);
		const cJSON *data =
			cJSON_GetObjectItem(cJSON_GetObjectItem(h->sends[h->nsend - 1], "error"), "data");
		CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(data, "did_you_mean")), near[i].meant);
		char want[64];
		snprintf(want, sizeof want, "did you mean '%s'?", near[i].meant);
		CHECK(strstr(h_send_text_last(h), want) != NULL);
	}
	static const char *const extensions[] = {
		"{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"x_trace\":\"1\"}",     /* far from every name */
		"{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"timeout_ms_hint\":1}", /* 8 edits from timeout */
		"{\"sandbox_id\":\"abc\",\"command\":\"ls\",\"usr_id\":1}", /* 'user' is short: one edit at most */
	};
	for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++) {
		char msg[512];
		snprintf(msg, sizeof msg,
			"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"exec.run\",\"params\":%s}",
			extensions[i]);
		h_submit(h, msg);
		CHECK(h_http_next(h) != NULL); /* accepted: the core asks for the sandbox */
		CHECK(h_send(h) == NULL);
	}

	/* null means absent, so optional fields may be sent as null */
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"sandbox.create\",\"params\":{\"cpu\":null,\"gpu\":0,\"timeout\":null}}");
	CHECK(h_http_next(h) != NULL);

	/* shutdown answers the calls in flight (canceled), then itself */
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"shutdown\"}");
	double ids = 0; /* the extensions' runs (id 4) and the create (id 5), canceled */
	for (size_t i = 0; i <= sizeof extensions / sizeof extensions[0]; i++) {
		r = h_send(h);
		ids += h_id(r);
		CHECK_NUM(h_error_code(r), -32018);
		CHECK_STR(h_error_kind(r), "canceled");
		CHECK(h_cancel_next(h) != 0);
	}
	CHECK_NUM(ids, 4 * 3 + 5);
	r = h_send(h);
	CHECK_NUM(h_id(r), 6);
	CHECK(h_result(r) != NULL);
	CHECK(e2bw_core_is_shut_down(h->core));
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sandbox.list\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32600);
	h_free(h);

	/* the method table describes itself for docs/epp-methods.json checks */
	char *described = e2bw_describe_methods();
	cJSON *d = cJSON_Parse(described);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(d, "methods")) >= 30);
	CHECK_NUM(cJSON_GetArraySize(cJSON_GetObjectItem(d, "features")), 9);
	cJSON_Delete(d);
	e2bw_free(described);
}
