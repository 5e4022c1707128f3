/* code.run and code.context.* against a hand-played code interpreter server:
 * requests as E2B's SDK sends them, the stream of JSON lines read the same at
 * every chunking into E2B's Execution with one code.output per output before
 * the answer, the server's errors as typed ones, the timeout. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

#define CONFIG \
	"{\"api_key\":\"sk-test-SECRET-1234\",\"api_url\":\"http://api.test\",\"sandbox_url\":\"http://envd.test\",\"request_timeout\":10}"
#define DETAIL \
	"{\"sandboxID\":\"sbx1\",\"templateID\":\"code-interpreter-v1\",\"state\":\"running\",\"envdAccessToken\":\"tok-ENVD-SECRET\"}"

#define STREAM \
	"{\"type\": \"number_of_executions\", \"execution_count\": 3}\n" \
	"{\"type\": \"stdout\", \"text\": \"hi\\n\", \"timestamp\": \"2026-01-01T00:00:00+00:00\"}\n" \
	"{\"type\": \"keepalive\"}\n" \
	"{\"type\": \"stderr\", \"text\": \"w\\u00e4rn\\n\", \"timestamp\": \"2026-01-01T00:00:01+00:00\"}\n" \
	"{\"type\": \"result\", \"png\": \"iVBORw0KGgo=\", \"text\": \"<Figure>\", \"extra\": {}, \"is_main_result\": false}\n" \
	"{\"type\": \"result\", \"text\": \"42\", \"extra\": {}, \"is_main_result\": true}\n" \
	"{\"type\": \"error\", \"name\": \"E\", \"value\": \"v\", \"traceback\": \"t\"}\n" \
	"{\"type\": \"end_of_execution\"}\n"

static void call(harness *h, int id, const char *method, const char *params)
{
	char msg[4096];
	snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id,
		method, params);
	h_submit(h, msg);
}

static const cJSON *field(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static harness *ready(const char *config)
{
	harness *h = h_new();
	h_init(h, config);
	call(h, 90, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_respond(h, h_http_next(h)->op, 200, NULL, DETAIL);
	h_send(h);
	return h;
}

/* The stream fed in three pieces, split at s and t. */
static void feed(harness *h, uint32_t op, const char *body, size_t s, size_t t)
{
	size_t n = strlen(body), cuts[3] = {s, t, n}, pos = 0;
	e2bw_core_http_head(h->core, op, 200, "content-type: application/x-ndjson\n", 35, h->now);
	for (int i = 0; i < 3; i++) {
		if (cuts[i] > pos)
			e2bw_core_http_body(h->core, op, (const uint8_t *)body + pos, cuts[i] - pos, h->now);
		pos = cuts[i] > pos ? cuts[i] : pos;
	}
	e2bw_core_http_end(h->core, op, h->now);
	h_drain(h);
}

static void test_run_request_and_execution(void)
{
	harness *h = h_new();
	h_init(h, CONFIG);
	call(h, 1, "code.run",
		"{\"sandbox_id\":\"sbx1\",\"code\":\"x = 1; x\",\"language\":\"python\",\"envs\":{\"A\":\"b\"}}");
	h_respond(h, h_http_next(h)->op, 200, NULL, DETAIL); /* its envd token, learned first */
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://envd.test/execute");
	CHECK_STR(h_header(req, "E2b-Sandbox-Id"), "sbx1");
	CHECK_STR(h_header(req, "E2b-Sandbox-Port"), "49999");
	CHECK_STR(h_header(req, "X-Access-Token"), "tok-ENVD-SECRET");
	CHECK_STR(h_header(req, "Content-Type"), "application/json");
	CHECK(h_header(req, "X-API-Key") == NULL);
	CHECK_STR(req->body, "{\"code\":\"x = 1; x\",\"language\":\"python\",\"env_vars\":{\"A\":\"b\"}}");
	feed(h, req->op, STREAM, 30, 200);
	const char *streams[] = {"stdout", "stderr", "result", "result", "error"};
	for (int i = 0; i < 5; i++) {
		cJSON *n = h_send(h);
		CHECK_STR(field(n, "method")->valuestring, "code.output");
		const cJSON *p = field(n, "params");
		CHECK_NUM(field(p, "request_id")->valuedouble, 1);
		CHECK_STR(field(p, "sandbox_id")->valuestring, "sbx1");
		CHECK_STR(field(p, "stream")->valuestring, streams[i]);
		if (i == 0)
			CHECK_STR(field(p, "text")->valuestring, "hi\n");
		if (i == 2)
			CHECK_STR(field(field(p, "result"), "png")->valuestring, "iVBORw0KGgo=");
		if (i == 4)
			CHECK_STR(field(field(p, "error"), "name")->valuestring, "E");
	}
	cJSON *r = h_send(h);
	const cJSON *exec = h_result(r);
	CHECK_NUM(h_id(r), 1);
	CHECK_NUM(field(exec, "execution_count")->valuedouble, 3);
	CHECK_STR(cJSON_GetArrayItem(field(field(exec, "logs"), "stdout"), 0)->valuestring, "hi\n");
	CHECK_STR(cJSON_GetArrayItem(field(field(exec, "logs"), "stderr"), 0)->valuestring, "w\xc3\xa4rn\n");
	const cJSON *results = field(exec, "results");
	CHECK_NUM(cJSON_GetArraySize(results), 2);
	CHECK(!cJSON_HasObjectItem(cJSON_GetArrayItem(results, 0), "type"));
	CHECK(cJSON_IsTrue(field(cJSON_GetArrayItem(results, 1), "is_main_result")));
	CHECK_STR(field(cJSON_GetArrayItem(results, 1), "text")->valuestring, "42");
	CHECK_STR(field(field(exec, "error"), "traceback")->valuestring, "t");
	CHECK(h_cancel_next(h) ==
		req->op); /* answered at end_of_execution: the rest of the response is not waited for */
	CHECK(h_pending(h) == 0);
	CHECK(e2bw_core_next_deadline(h->core) == -1); /* the timeout went with the call */
	h_free(h);
}

/* Every split of the stream into three chunks gives the same answer. */
static void test_run_every_chunking(void)
{
	char *want = NULL;
	size_t n = strlen(STREAM);
	for (size_t s = 0; s <= n; s += 7) {
		for (size_t t = s; t <= n; t += 13) {
			harness *h = ready(CONFIG);
			call(h, 1, "code.run", "{\"sandbox_id\":\"sbx1\",\"code\":\"x\"}");
			feed(h, h_http_next(h)->op, STREAM, s, t);
			for (int i = 0; i < 5; i++)
				h_send(h);
			char *got = cJSON_PrintUnformatted(h_result(h_send(h)));
			if (!want)
				want = got;
			else {
				CHECK_STR(got, want);
				free(got);
			}
			h_free(h);
		}
	}
	free(want);
}

static void test_run_without_sandbox_url(void)
{
	harness *h = ready(
		"{\"api_key\":\"k-123456789\",\"api_url\":\"http://api.test\",\"domain\":\"e2b.test\"}");
	call(h, 1, "code.run", "{\"sandbox_id\":\"sbx1\",\"code\":\"1\",\"context_id\":\"c-1\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url, "https://49999-sbx1.e2b.test/execute");
	CHECK_STR(req->body, "{\"code\":\"1\",\"context_id\":\"c-1\"}");
	h_free(h);
}

static void check_error(harness *h, int status, const char *body, int code, const char *kind,
	const char *text)
{
	call(h, 5, "code.run", "{\"sandbox_id\":\"sbx1\",\"code\":\"1\"}");
	h_respond(h, h_http_next(h)->op, status, NULL, body);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), code);
	CHECK_STR(h_error_kind(r), kind);
	CHECK(strstr(h_error_message(r), text) != NULL);
	while (h_cancel_next(h)) {
	}
}

static void test_run_errors(void)
{
	harness *h = ready(CONFIG);
	check_error(h, 404, "Context c-9 not found", -32002, "not_found", "Context c-9 not found");
	check_error(h, 400, "Only one of context_id or language can be provided", -32602, "invalid_argument",
		"Only one of");
	check_error(h, 401, "unauthorized access", -32010, "unauthenticated", "HTTP 401");
	check_error(h, 500, "Failed to create context", -32000, "backend_error", "Failed to create context");
	check_error(h, 502,
		"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox is running but port is not open\",\"port\":49999,\"code\":502}",
		-32015, "unavailable", "No code interpreter answers on port 49999");
	/* a stream without its end, and a line past the limit's framing: never a success */
	call(h, 6, "code.run", "{\"sandbox_id\":\"sbx1\",\"code\":\"1\"}");
	feed(h, h_http_next(h)->op, "{\"type\": \"stdout\", \"text\": \"x\"}\n", 5, 9);
	h_send(h);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32017);
	CHECK(strstr(h_error_message(r), "without end_of_execution") != NULL);
	/* both a context and a language: refused before anything is sent */
	call(h, 7, "code.run",
		"{\"sandbox_id\":\"sbx1\",\"code\":\"1\",\"context_id\":\"c\",\"language\":\"r\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK(h_pending(h) == 0);
	h_free(h);
}

static void test_run_timeout(void)
{
	harness *h = ready(CONFIG);
	call(h, 1, "code.run",
		"{\"sandbox_id\":\"sbx1\",\"code\":\"import time; time.sleep(99)\",\"timeout\":5}");
	h_http *req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	const char *alive = "{\"type\": \"keepalive\"}\n";
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)alive, strlen(alive), h->now);
	h_drain(h);
	CHECK(e2bw_core_next_deadline(h->core) <= h->now + 5000);
	e2bw_core_tick(h->core, h->now + 5000);
	h_drain(h);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32013);
	CHECK(strstr(h_error_message(r), "timeout of 5 s") != NULL);
	CHECK(h_cancel_next(h) == req->op); /* the server sees its client go and interrupts the kernel */
	CHECK(e2bw_core_next_deadline(h->core) == -1);
	h_free(h);
}

static void test_contexts(void)
{
	harness *h = ready(CONFIG);
	call(h, 1, "code.context.create", "{\"sandbox_id\":\"sbx1\",\"language\":\"r\",\"cwd\":\"/tmp\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://envd.test/contexts");
	CHECK_STR(req->body, "{\"language\":\"r\",\"cwd\":\"/tmp\"}");
	CHECK(h_header(req, "X-Access-Token") == NULL); /* only /execute carries it, as the SDK sends them */
	h_respond(h, req->op, 200, NULL, "{\"id\":\"c-1\",\"language\":\"r\",\"cwd\":\"/tmp\"}");
	CHECK_STR(field(h_result(h_send(h)), "id")->valuestring, "c-1");

	call(h, 2, "code.context.list", "{\"sandbox_id\":\"sbx1\"}");
	req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	h_respond(h, req->op, 200, NULL, "[{\"id\":\"c-1\",\"language\":\"r\",\"cwd\":\"/tmp\"}]");
	CHECK_NUM(cJSON_GetArraySize(field(h_result(h_send(h)), "contexts")), 1);

	call(h, 3, "code.context.restart", "{\"sandbox_id\":\"sbx1\",\"context_id\":\"c/1\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/contexts/c%2F1/restart");
	h_respond(h, req->op, 200, NULL, "null");
	const cJSON *res = h_result(h_send(h));
	CHECK_STR(field(res, "context_id")->valuestring, "c/1");
	CHECK(cJSON_IsTrue(field(res, "restarted")));

	call(h, 4, "code.context.remove", "{\"sandbox_id\":\"sbx1\",\"context_id\":\"c-1\"}");
	req = h_http_next(h);
	CHECK_STR(req->method, "DELETE");
	h_respond(h, req->op, 404, NULL, "Context c-1 not found");
	CHECK_NUM(h_error_code(h_send(h)), -32002);

	call(h, 5, "code.context.list", "{\"sandbox_id\":\"sbx1\"}");
	h_respond(h, h_http_next(h)->op, 200, NULL, "{\"not\":\"a list\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32017);
	CHECK(h_pending(h) == 0);
	h_free(h);
}

void suite_code(void)
{
	test_run_request_and_execution();
	test_run_every_chunking();
	test_run_without_sandbox_url();
	test_run_errors();
	test_run_timeout();
	test_contexts();
}
