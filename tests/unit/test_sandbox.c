/* sandbox.* → E2B control-plane requests, answers → records and errors. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

#define DETAIL(id, state, end) \
	"{\"sandboxID\":\"" id \
	"\",\"templateID\":\"tpl-id\",\"alias\":\"base\",\"clientID\":\"c\",\"state\":\"" state \
	"\",\"startedAt\":\"2026-01-01T00:00:00.000Z\",\"endAt\":\"" end \
	"\",\"cpuCount\":2,\"memoryMB\":512," \
	"\"diskSizeMB\":1024,\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"tok-SECRET-9\",\"metadata\":{\"k\":\"v\"}}"
/* A paused sandbox as the local backend reports it: endAt is the pause
 * time, as on E2B, and lifetimeLeft (its extension) the seconds it had left. */
#define PAUSED_LEFT(id, end, left) \
	"{\"sandboxID\":\"" id \
	"\",\"templateID\":\"base\",\"state\":\"paused\",\"startedAt\":\"2025-12-31T23:00:00Z\"," \
	"\"endAt\":\"" end "\",\"lifetimeLeft\":" left "}"

static harness *ready(void)
{
	harness *h = h_new();
	h_init(h, H_CONFIG);
	return h;
}

static void call(harness *h, int id, const char *method, const char *params)
{
	char msg[2048];
	snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id,
		method, params);
	h_submit(h, msg);
}

static const cJSON *field(const cJSON *obj, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static void test_create(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.create",
		"{\"template\":\"py\",\"timeout\":60.2,\"metadata\":{\"app\":\"x\"},\"envs\":{\"A\":\"1\"},\"cpu\":4,\"memory\":2048,\"gpu\":null,"
		"\"options\":{\"auto_pause\":true,\"auto_resume\":false,\"allow_internet_access\":false,\"network\":{\"allowOut\":[\"1.1.1.1\"]}}}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://api.test/v2/sandboxes");
	CHECK_STR(h_header(req, "X-API-Key"), "sk-test-SECRET-1234");
	CHECK_STR(h_header(req, "Content-Type"), "application/json");
	cJSON *body = cJSON_Parse(req->body);
	CHECK_STR(field(body, "templateID")->valuestring, "py");
	CHECK_NUM(field(body, "timeout")->valuedouble, 61); /* rounded up, never down */
	CHECK_STR(field(field(body, "metadata"), "app")->valuestring, "x");
	CHECK_STR(field(field(body, "envVars"), "A")->valuestring, "1");
	CHECK(cJSON_IsTrue(field(body, "autoPause")));
	CHECK(cJSON_IsFalse(field(field(body, "autoResume"), "enabled")));
	CHECK(cJSON_IsFalse(field(body, "allow_internet_access")));
	CHECK(cJSON_IsArray(field(field(body, "network"), "allowOut")));
	CHECK(field(body, "secure") == NULL);
	CHECK_NUM(field(body, "cpuCount")->valuedouble, 4); /* applied where the backend can */
	CHECK_NUM(field(body, "memoryMB")->valuedouble, 2048);
	cJSON_Delete(body);
	h_respond(h, req->op, 201, "content-type: application/json\n",
		"{\"templateID\":\"tpl-id\",\"alias\":\"py\",\"sandboxID\":\"sbx1\",\"clientID\":\"c\",\"envdVersion\":\"0.6.13\","
		"\"envdAccessToken\":\"tok-SECRET-9\",\"domain\":null}");
	/* the create answer has no times or resources: the record takes them
   * from the sandbox's detail, like sandbox.get */
	req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1");
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:01:01.000Z"));
	cJSON *r = h_send(h);
	const cJSON *rec = h_result(r);
	CHECK_STR(field(rec, "created_at")->valuestring, "2026-01-01T00:00:00.000Z");
	CHECK_STR(field(rec, "expires_at")->valuestring, "2026-01-01T00:01:01.000Z");
	CHECK_NUM(field(rec, "cpu")->valuedouble, 2); /* what it really got */
	CHECK_NUM(field(rec, "memory")->valuedouble, 512);
	CHECK_NUM(h_id(r), 1);
	CHECK_STR(field(rec, "sandbox_id")->valuestring, "sbx1");
	CHECK_STR(field(rec, "template")->valuestring, "py");
	CHECK_STR(field(rec, "template_id")->valuestring, "tpl-id");
	CHECK_STR(field(rec, "status")->valuestring, "running");
	CHECK_STR(field(field(rec, "metadata"), "app")->valuestring, "x");
	CHECK_STR(field(rec, "envd_version")->valuestring, "0.6.13");
	CHECK(field(rec, "domain") == NULL);
	CHECK(strstr(h_send_text_last(h), "tok-SECRET") == NULL);

	/* defaults; secure:false takes the v1 route, the only one without a token */
	call(h, 2, "sandbox.create", "{\"secure\":false}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes");
	body = cJSON_Parse(req->body);
	CHECK_STR(field(body, "templateID")->valuestring, "base");
	CHECK(field(body, "timeout") == NULL);
	CHECK(cJSON_IsFalse(field(body, "secure")));
	cJSON_Delete(body);
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"template 'base' not found\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK(strstr(h_error_message(r), "Template 'base' not found") != NULL);
	CHECK(strstr(h_send_text_last(h), "\"sdk_code\":\"E4001\"") !=
		NULL); /* every not-found has its sdk_code */

	call(h, 3, "sandbox.create", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 201, NULL, "{\"templateID\":\"base\"}"); /* no sandboxID */
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "bad_response");
	CHECK_NUM(h_error_code(r), -32017);

	call(h, 4, "sandbox.create", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 400, NULL,
		"{\"code\":400,\"message\":\"Timeout cannot be greater than 24 hours\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK_STR(h_error_kind(r), "invalid_argument");
	CHECK(strstr(h_error_message(r), "Timeout cannot be greater than 24 hours") != NULL);
	h_free(h);
}

static void test_get_and_errors(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1");
	CHECK(req->body == NULL);
	CHECK(h_header(req, "Content-Type") == NULL);
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "paused", "2026-01-01T00:05:00.000Z"));
	const cJSON *rec = h_result(h_send(h));
	CHECK_STR(field(rec, "status")->valuestring, "paused");
	CHECK_STR(field(rec, "template")->valuestring, "base");
	CHECK_STR(field(rec, "created_at")->valuestring, "2026-01-01T00:00:00.000Z");
	/* paused: no expiry; E2B's endAt is when it paused, and no time left is known */
	CHECK(field(rec, "expires_at") == NULL);
	CHECK_STR(field(rec, "paused_at")->valuestring, "2026-01-01T00:05:00.000Z");
	CHECK(field(rec, "lifetime_left") == NULL);
	CHECK_NUM(field(rec, "cpu")->valuedouble, 2);
	CHECK_NUM(field(rec, "memory")->valuedouble, 512);
	CHECK_NUM(field(rec, "disk")->valuedouble, 1024);
	CHECK_STR(field(field(rec, "metadata"), "k")->valuestring, "v");
	CHECK(field(rec, "envd_access_token") == NULL);
	/* the local backend also says what it had left */
	call(h, 2, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_respond(h, h_http_next(h)->op, 200, NULL,
		PAUSED_LEFT("sbx1", "2025-12-31T23:50:00.000Z", "597.25"));
	rec = h_result(h_send(h));
	CHECK_NUM(field(rec, "lifetime_left")->valuedouble, 597.25);
	CHECK_STR(field(rec, "paused_at")->valuestring, "2025-12-31T23:50:00.000Z");
	CHECK(field(rec, "expires_at") == NULL);
	/* running: expires_at, and neither paused field */
	call(h, 3, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_respond(h, h_http_next(h)->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:05:00.000Z"));
	rec = h_result(h_send(h));
	CHECK_STR(field(rec, "expires_at")->valuestring, "2026-01-01T00:05:00.000Z");
	CHECK(field(rec, "paused_at") == NULL && field(rec, "lifetime_left") == NULL);

	static const struct {
		int status;
		const char *headers, *body;
		int code;
		const char *kind;
	} cases[] = {
		{404, NULL, "{\"code\":404,\"message\":\"Sandbox \\\"sbx1\\\" doesn't exist\"}", -32002,
			"not_found"},
		{401, NULL, "{\"code\":401,\"message\":\"Invalid API key sk-test-SECRET-1234\"}", -32010,
			"unauthenticated"},
		{403, NULL, "{\"code\":403,\"message\":\"nope\"}", -32011, "permission_denied"},
		{409, NULL, "{\"code\":409,\"message\":\"busy\"}", -32016, "conflict"},
		{429, "Retry-After: 3\n", "{\"code\":429,\"message\":\"slow down\"}", -32014, "rate_limited"},
		{500, NULL, "{\"code\":500,\"message\":\"boom\",\"error_code\":\"internal_server_error\"}",
			-32000, "backend_error"},
		{502, NULL, "<html>bad gateway</html>", -32015, "unavailable"},
		{503, NULL, "", -32015, "unavailable"},
		{504, NULL, "{}", -32013, "timeout"},
		{418, NULL, "\x01\x02 teapot", -32000, "backend_error"},
		{200, NULL, "not json", -32017, "bad_response"},
		{200, NULL, "[1,2]", -32017, "bad_response"},
		{200, NULL, "", -32017, "bad_response"},
		{204, NULL, NULL, -32017, "bad_response"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		call(h, 10 + (int)i, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
		req = h_http_next(h);
		h_respond(h, req->op, cases[i].status, cases[i].headers, cases[i].body);
		cJSON *r = h_send(h);
		CHECK_NUM(h_id(r), 10 + (int)i);
		CHECK_NUM(h_error_code(r), cases[i].code);
		CHECK_STR(h_error_kind(r), cases[i].kind);
		const char *text = h_send_text_last(h);
		CHECK(strstr(text, "sk-test-SECRET-1234") ==
			NULL); /* redacted even when the backend echoes it */
		const cJSON *data = field(field(r, "error"), "data");
		if (cases[i].status == 404) {
			CHECK_STR(field(data, "sdk_code")->valuestring, "E2009");
			CHECK(strstr(h_error_message(r), "Sandbox 'sbx1' not found") != NULL);
		}
		if (cases[i].status == 429)
			CHECK_NUM(field(data, "retry_after")->valuedouble, 3);
		if (cases[i].status == 500) {
			CHECK_STR(field(data, "backend_code")->valuestring, "internal_server_error");
			CHECK(strstr(h_error_message(r), "boom") != NULL);
		}
		if (cases[i].status != 200 && cases[i].status != 204)
			CHECK_NUM(field(data, "http_status")->valuedouble, cases[i].status);
	}
	h_free(h);
}

static void test_list(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.list", "{\"metadata\":{\"a b\":\"c&d\"},\"state\":[\"running\",\"paused\"]}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url,
		"http://api.test/v2/sandboxes?limit=100&state=running,paused&metadata=a%2520b%3Dc%2526d");
	h_respond(h, req->op, 200, "X-Next-Token: t1\nX-Total-Running: 3\n",
		"[" DETAIL("s1", "running", "2026-01-01T00:05:00Z") "," DETAIL("s2", "paused",
			"2026-01-01T00:05:00Z") "]");
	req = h_http_next(h); /* follows the cursor by itself */
	CHECK(req != NULL);
	CHECK(strstr(req->url, "&nextToken=t1") != NULL);
	CHECK(h_pending(h) == 0);
	h_respond(h, req->op, 200, "x-next-token: \n",
		"[" DETAIL("s3", "running", "2026-01-01T00:05:00Z") "]");
	cJSON *r = h_send(h);
	const cJSON *list = field(h_result(r), "sandboxes");
	CHECK_NUM(cJSON_GetArraySize(list), 3);
	CHECK_STR(field(cJSON_GetArrayItem(list, 2), "sandbox_id")->valuestring, "s3");
	CHECK(cJSON_IsNull(field(h_result(r), "next_token")));

	/* with a limit: one page, and the cursor for the next */
	call(h, 2, "sandbox.list", "{\"limit\":1,\"state\":\"paused\",\"next_token\":\"a/b\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/sandboxes?limit=1&state=paused&nextToken=a%2Fb");
	h_respond(h, req->op, 200, "X-Next-Token: t2\n",
		"[" DETAIL("s2", "paused", "2026-01-01T00:05:00Z") "]");
	r = h_send(h);
	CHECK_STR(field(h_result(r), "next_token")->valuestring, "t2");
	CHECK(h_pending(h) == 0);

	/* a cursor that never ends is a bad backend, not a hang */
	call(h, 3, "sandbox.list", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, "X-Next-Token: same\n", "[]");
	req = h_http_next(h);
	h_respond(h, req->op, 200, "X-Next-Token: same\n", "[]");
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "bad_response");

	call(h, 4, "sandbox.list", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "{\"not\":\"an array\"}");
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");
	call(h, 5, "sandbox.list", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "[1]");
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");
	h_free(h);
}

/* A page over the response cap (sandboxes with large metadata) is asked
 * again in halves from the same position; listing never fails for it. */
static void test_list_page_too_large(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.list", "{}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/sandboxes?limit=100");
	size_t big = E2BW_MAX_RESPONSE_BYTES + 1;
	char *huge = malloc(big);
	memset(huge, ' ', big);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)huge, big, h->now);
	h_drain(h);
	CHECK_NUM(h_cancel_next(h), req->op);
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/sandboxes?limit=50");
	h_respond(h, req->op, 200, "x-next-token: t2\n",
		"[" DETAIL("a", "running", "2026-01-01T01:00:00.000Z") "]");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/sandboxes?limit=50&nextToken=t2");
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)huge, big, h->now);
	h_drain(h);
	req = h_http_next(h); /* the same position, a smaller page */
	CHECK_STR(req->url, "http://api.test/v2/sandboxes?limit=25&nextToken=t2");
	h_respond(h, req->op, 200, NULL, "[" DETAIL("b", "running", "2026-01-01T01:00:00.000Z") "]");
	cJSON *r = h_send(h);
	CHECK_NUM(cJSON_GetArraySize(field(h_result(r), "sandboxes")), 2);
	/* one sandbox that alone passes the cap: an error, not a loop */
	call(h, 2, "sandbox.list", "{\"limit\":1}");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)huge, big, h->now);
	h_drain(h);
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");
	CHECK(h_http_next(h) == NULL); /* no retry below one sandbox a page */
	free(huge);
	h_free(h);
}

/* A create whose answer is lost finds its sandbox by its own key and
 * returns it: a retried create never leaks a running sandbox. */
static void test_create_answer_lost(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.create", "{\"metadata\":{\"app\":\"x\"}}");
	h_http *req = h_http_next(h);
	cJSON *body = cJSON_Parse(req->body);
	const cJSON *key = field(field(body, "metadata"), "e2bw_create_key");
	CHECK(cJSON_IsString(key));
	char want[256];
	snprintf(want, sizeof want,
		"http://api.test/v2/sandboxes?state=running,paused&metadata=e2bw_create_key%%3D%s",
		key->valuestring);
	cJSON_Delete(body);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now); /* sent, answer lost */
	h_drain(h);
	req = h_http_next(h);
	CHECK_STR(req->url, want);
	h_respond(h, req->op, 200, NULL, "[" DETAIL("sbx9", "running", "2026-01-01T01:00:00.000Z") "]");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx9");
	h_respond(h, req->op, 200, NULL, DETAIL("sbx9", "running", "2026-01-01T01:00:00.000Z"));
	cJSON *r = h_send(h);
	CHECK_STR(field(h_result(r), "sandbox_id")->valuestring, "sbx9");
	CHECK(field(field(h_result(r), "metadata"), "e2bw_create_key") == NULL); /* ours, never shown */
	CHECK(h_pending(h) == 0);

	/* nothing was made: the original error */
	call(h, 2, "sandbox.create", "{}");
	req = h_http_next(h);
	h->now += 20000; /* past request_timeout */
	e2bw_core_tick(h->core, h->now);
	h_drain(h);
	h_cancel_next(h);
	req = h_http_next(h);
	CHECK(strstr(req->url, "e2bw_create_key") != NULL);
	h_respond(h, req->op, 200, NULL, "[]");
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "timeout");

	/* a refusal is not a lost answer: no lookup */
	call(h, 3, "sandbox.create", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 400, NULL, "{\"code\":400,\"message\":\"bad\"}");
	CHECK_STR(h_error_kind(h_send(h)), "invalid_argument");
	CHECK(h_http_next(h) == NULL);
	h_free(h);
}

static void test_kill_timeout_pause(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.kill", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "DELETE");
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1");
	h_respond(h, req->op, 204, NULL, NULL);
	CHECK(cJSON_IsTrue(field(h_result(h_send(h)), "killed")));
	call(h, 2, "sandbox.kill", "{\"sandbox_id\":\"sbx1\"}"); /* gone already: still a success */
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"gone\"}");
	cJSON *r = h_send(h);
	CHECK(cJSON_IsFalse(field(h_result(r), "killed")));
	call(h, 3, "sandbox.kill", "{\"sandbox_id\":\"sbx1\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 500, NULL, "{\"code\":500,\"message\":\"x\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32000);

	call(h, 4, "sandbox.set_timeout", "{\"sandbox_id\":\"sbx1\",\"timeout\":60.5}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1/timeout");
	CHECK_STR(req->body, "{\"timeout\":61}");
	h_respond(h, req->op, 204, NULL, NULL);
	CHECK_NUM(field(h_result(h_send(h)), "timeout")->valuedouble, 61);
	call(h, 5, "sandbox.set_timeout", "{\"sandbox_id\":\"gone\",\"timeout\":5}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(field(field(field(r, "error"), "data"), "sdk_code")->valuestring, "E2009");

	call(h, 6, "sandbox.pause", "{\"sandbox_id\":\"sbx1\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1/pause");
	CHECK_STR(req->method, "POST");
	h_respond(h, req->op, 204, NULL, NULL);
	CHECK(cJSON_IsTrue(field(h_result(h_send(h)), "changed")));
	call(h, 7, "sandbox.pause", "{\"sandbox_id\":\"sbx1\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 409, NULL, "{\"code\":409,\"message\":\"already paused\"}");
	r = h_send(h);
	CHECK(cJSON_IsFalse(field(h_result(r), "changed")));
	CHECK_STR(field(h_result(r), "status")->valuestring, "paused");
	call(h, 8, "sandbox.pause", "{\"sandbox_id\":\"gone\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404}");
	CHECK_NUM(h_error_code(h_send(h)), -32002);
	h_free(h);
}

/* sandbox.connect or .resume without a timeout of sbx1, which the look finds
 * paused (detail): the connect that resumes it sends body. */
static void resumes_with(harness *h, int id, const char *method, const char *detail, const char *body)
{
	call(h, id, method, "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	h_respond(h, req->op, 200, NULL, detail);
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/sandboxes/sbx1/connect");
	CHECK_STR(req->body, body);
	h_respond(h, req->op, 201, NULL, "{\"sandboxID\":\"sbx1\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:05:00Z"));
	CHECK_STR(field(h_result(h_send(h)), "status")->valuestring, "running");
}

static void test_connect(void)
{
	harness *h = ready(); /* now = 2026-01-01T00:00:00Z */
	/* running, no timeout: look only, never touch the lifetime */
	call(h, 1, "sandbox.connect", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T01:00:00.000Z"));
	cJSON *r = h_send(h);
	CHECK_STR(field(h_result(r), "expires_at")->valuestring, "2026-01-01T01:00:00.000Z");
	CHECK(h_pending(h) == 0);

	/* paused with 1000.4 s left: resume with all of it, not E2B's 300 */
	call(h, 2, "sandbox.resume", "{\"sandbox_id\":\"sbx1\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "paused", "2026-01-01T00:16:40.400Z"));
	req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://api.test/v2/sandboxes/sbx1/connect");
	CHECK_STR(req->body, "{\"timeout\":1001}");
	h_respond(h, req->op, 201, NULL, "{\"sandboxID\":\"sbx1\",\"templateID\":\"base\"}");
	req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:16:41.000Z"));
	r = h_send(h);
	CHECK_STR(field(h_result(r), "status")->valuestring, "running");

	/* paused as both backends report it, endAt the pause time (past): the
   * lifetime it had left when the backend says it (lifetimeLeft), rounded up */
	resumes_with(h, 7, "sandbox.resume", PAUSED_LEFT("sbx1", "2025-12-31T23:30:00.000Z", "597.25"),
		"{\"timeout\":598}");
	/* ...and never less than E2B's default (a sandbox paused on expiry has 0) */
	resumes_with(h, 8, "sandbox.resume", PAUSED_LEFT("sbx1", "2025-12-31T23:30:00.000Z", "0"),
		"{\"timeout\":300}");
	/* paused and past its end, nothing else said (E2B): E2B's default */
	resumes_with(h, 3, "sandbox.connect", DETAIL("sbx1", "paused", "2025-12-31T23:00:00Z"),
		"{\"timeout\":300}");

	/* an explicit timeout is the caller's choice: connect with it */
	call(h, 4, "sandbox.connect", "{\"sandbox_id\":\"sbx1\",\"timeout\":120}");
	req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->body, "{\"timeout\":120}");
	h_respond(h, req->op, 200, NULL, "{\"sandboxID\":\"sbx1\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:02:00Z"));
	CHECK(h_result(h_send(h)) != NULL);

	call(h, 5, "sandbox.connect", "{\"sandbox_id\":\"nope\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(field(field(field(r, "error"), "data"), "sdk_code")->valuestring, "E2009");
	call(h, 6, "sandbox.resume", "{\"sandbox_id\":\"nope\",\"timeout\":5}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404}");
	CHECK_NUM(h_error_code(h_send(h)), -32002);
	h_free(h);
}

/* sandbox.metrics: E2B's samples in the seed's snake_case; the range as Unix
 * seconds (start down, end up); sandbox.get with metrics: true adds the
 * latest sample of a running sandbox, and stands without it when that fails. */
static void test_metrics(void)
{
	harness *h = ready();
	call(h, 1, "sandbox.metrics",
		"{\"sandbox_id\":\"sbx1\",\"start\":\"2026-01-01T00:00:05.900Z\",\"end\":1767225610.2}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1/metrics?start=1767225605&end=1767225611");
	h_respond(h, req->op, 200, NULL,
		"[{\"timestamp\":\"2026-01-01T00:00:06Z\",\"timestampUnix\":1767225606,\"cpuCount\":2,\"cpuUsedPct\":12.5,"
		"\"memUsed\":1000,\"memTotal\":536870912,\"memCache\":7,\"diskUsed\":3,\"diskTotal\":9,\"extra\":1}]");
	cJSON *r = h_send(h);
	const cJSON *m = cJSON_GetArrayItem(field(h_result(r), "metrics"), 0);
	CHECK_STR(field(h_result(r), "sandbox_id")->valuestring, "sbx1");
	CHECK_STR(field(m, "timestamp")->valuestring, "2026-01-01T00:00:06Z");
	CHECK_NUM(field(m, "timestamp_unix")->valuedouble, 1767225606);
	CHECK_NUM(field(m, "cpu_used_pct")->valuedouble, 12.5);
	CHECK_NUM(field(m, "mem_total")->valuedouble, 536870912);
	CHECK_NUM(field(m, "disk_total")->valuedouble, 9);
	CHECK(field(m, "extra") == NULL && field(m, "cpuCount") == NULL);

	call(h, 2, "sandbox.metrics", "{\"sandbox_id\":\"gone\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes/gone/metrics");
	h_respond(h, req->op, 404, NULL, "{\"code\":404}");
	CHECK_NUM(h_error_code(h_send(h)), -32002);
	call(h, 3, "sandbox.metrics", "{\"sandbox_id\":\"sbx1\",\"start\":\"2026-01-01T00:00:00+02:00\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32602);
	call(h, 4, "sandbox.metrics", "{\"sandbox_id\":\"sbx1\",\"end\":-1}");
	CHECK_NUM(h_error_code(h_send(h)), -32602);

	call(h, 5, "sandbox.get", "{\"sandbox_id\":\"sbx1\",\"metrics\":true}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:01:01.000Z"));
	req = h_http_next(h);
	CHECK(strncmp(req->url, "http://api.test/sandboxes/sbx1/metrics?start=", 45) == 0);
	h_respond(h, req->op, 200, NULL, "[{\"cpuUsedPct\":1},{\"cpuUsedPct\":2}]");
	r = h_send(h);
	CHECK_NUM(field(field(h_result(r), "metrics"), "cpu_used_pct")->valuedouble, 2); /* the latest */
	CHECK_STR(field(h_result(r), "status")->valuestring, "running");
	call(h, 6, "sandbox.get", "{\"sandbox_id\":\"sbx1\",\"metrics\":true}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, DETAIL("sbx1", "running", "2026-01-01T00:01:01.000Z"));
	req = h_http_next(h);
	h_respond(h, req->op, 500, NULL, "{\"code\":500}");
	r = h_send(h);
	CHECK_STR(field(h_result(r), "sandbox_id")->valuestring, "sbx1");
	CHECK(field(h_result(r), "metrics") == NULL);
	call(h, 7, "sandbox.get", "{\"sandbox_id\":\"sbx1\",\"metrics\":true}"); /* paused: one request */
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, PAUSED_LEFT("sbx1", "2026-01-01T00:00:30Z", "12"));
	r = h_send(h);
	CHECK(field(h_result(r), "metrics") == NULL);
	CHECK(h_pending(h) == 0);
	h_free(h);
}

void suite_sandbox(void)
{
	test_create_answer_lost();
	test_list_page_too_large();
	test_create();
	test_get_and_errors();
	test_list();
	test_kill_timeout_pause();
	test_connect();
	test_metrics();
}
