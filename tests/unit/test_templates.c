/* templates.* → E2B's template API: the requests the official SDK's
 * Template.build makes, in its order and shapes, with the backend's answers
 * as its schemas give them (TemplateRequestResponseV3,
 * TemplateBuildFileUpload, TemplateBuildInfo, Template); the templates.log
 * notifications; and every way a build can fail. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

#define DOCKERFILE \
	"FROM e2bdev/base\\nRUN echo built > /opt/marker\\nCOPY hello.txt /opt/hello.txt\\nENV GREETING=hi\\nWORKDIR /opt\\n"
#define CONTEXT "[{\"path\":\"hello.txt\",\"content\":\"aGVsbG8K\"}]"
/* the SDK's filesHash of `COPY hello.txt /opt/hello.txt` over that file (test_dockerfile.c) */
#define HELLO_HASH "07bccaf495dfbf546d1e4c05dd18bf5822c1e719f5b17f5f460719cc8e93febd"
#define BUILD_PARAMS \
	"{\"name\":\"my-tpl\",\"dockerfile\":\"" DOCKERFILE "\",\"context\":" CONTEXT \
	",\"cpu\":2,\"memory\":1024,\"disk\":2048}"
#define CREATED \
	"{\"aliases\":[\"my-tpl\"],\"buildID\":\"b-1\",\"names\":[\"my-tpl\"],\"public\":false,\"tags\":[\"default\"],\"templateID\":\"tpl-1\"}"
#define LINK \
	"{\"present\":false,\"url\":\"http://upload.test/put?sig=abc\",\"headers\":{\"x-goog-meta\":\"v\",\"Content-Length\":\"1\"}}"
#define ENTRY(msg, step) \
	"{\"level\":\"info\",\"message\":\"" msg "\",\"step\":\"" step \
	"\",\"timestamp\":\"2026-01-01T00:00:01.000Z\"}"
#define STATUS(status, entries) \
	"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"" status "\",\"logEntries\":[" entries \
	"],\"logs\":[]}"

static harness *ready(void)
{
	harness *h = h_new();
	h_init(h, H_CONFIG);
	return h;
}

static void call(harness *h, int id, const char *method, const char *params)
{
	size_t n = strlen(params) + 200;
	char *msg = malloc(n);
	snprintf(msg, n, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id, method,
		params);
	h_submit(h, msg);
	free(msg);
}

static const cJSON *field(const cJSON *obj, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(obj, name);
}
static const cJSON *data_of(const cJSON *msg)
{
	return field(field(msg, "error"), "data");
}
static const char *data_str(const cJSON *msg, const char *name)
{
	const cJSON *v = field(data_of(msg), name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The next message is a templates.log of request 1 with this message. */
static void check_log(harness *h, const char *message, const char *step)
{
	cJSON *n = h_send(h);
	CHECK_STR(cJSON_IsString(field(n, "method")) ? field(n, "method")->valuestring : NULL,
		"templates.log");
	const cJSON *p = field(n, "params");
	CHECK_NUM(field(p, "request_id") ? field(p, "request_id")->valuedouble : -1, 1);
	CHECK_STR(field(p, "level") ? field(p, "level")->valuestring : NULL, "info");
	CHECK_STR(field(p, "message") ? field(p, "message")->valuestring : NULL, message);
	CHECK_STR(field(p, "timestamp") ? field(p, "timestamp")->valuestring : NULL,
		"2026-01-01T00:00:01.000Z");
	if (step)
		CHECK_STR(field(p, "step") ? field(p, "step")->valuestring : NULL, step);
}

static void test_declared(void)
{
	harness *h = h_new();
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"config\":" H_CONFIG
		"}}");
	const cJSON *features = field(h_result(h_send(h)), "features"), *f;
	int has_templates = 0;
	cJSON_ArrayForEach(f, features)
		has_templates |= !strcmp(f->valuestring, "templates.build");
	CHECK(has_templates); /* its contract case passes against the local backend */
	/* nothing awaits its contract case any more: no feature can be opened */
	CHECK_NUM(e2bw_core_preview_feature(h->core, "files.rw"), -1);
	CHECK_NUM(e2bw_core_preview_feature(h->core, "templates"), -1);
	CHECK_NUM(e2bw_core_preview_feature(h->core, NULL), -1);
	CHECK_NUM(e2bw_core_preview_feature(h->core, "templates.build"), -1);
	call(h, 2, "templates.list", "{}");
	CHECK(h_http_next(h) != NULL);
	h_free(h);
	/* the method table says so too */
	char *described = e2bw_describe_methods();
	cJSON *d = cJSON_Parse(described);
	const cJSON *m;
	int listed = 0, declared = 0;
	cJSON_ArrayForEach(m, field(d, "methods")) {
		if (strcmp(field(m, "feature")->valuestring, "templates.build"))
			continue;
		listed++;
		CHECK(cJSON_IsTrue(field(m, "implemented")));
	}
	CHECK_NUM(listed, 4);
	cJSON_ArrayForEach(f, field(d, "features"))
		declared |= !strcmp(f->valuestring, "templates.build");
	CHECK(declared);
	cJSON_Delete(d);
	e2bw_free(described);
}

/* The build's first requests, answered; returns the upload request. */
static h_http *to_upload(harness *h)
{
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, CREATED);
	req = h_http_next(h);
	h_respond(h, req->op, 201, NULL, LINK);
	return h_http_next(h);
}

/* A build with no COPY step, created and started: its first status read. */
static h_http *to_status(harness *h, int id, const char *params)
{
	call(h, id, "templates.build", params);
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, CREATED);
	req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, NULL);
	return h_http_next(h);
}

static void test_build(void)
{
	harness *h = ready();
	call(h, 1, "templates.build", BUILD_PARAMS);
	/* 1. the template: POST /v3/templates with the name and resources */
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://api.test/v3/templates");
	CHECK_STR(h_header(req, "X-API-Key"), "sk-test-SECRET-1234");
	cJSON *body = cJSON_Parse(req->body);
	cJSON *want =
		cJSON_Parse("{\"name\":\"my-tpl\",\"cpuCount\":2,\"memoryMB\":1024,\"minFreeDiskMb\":2048}");
	CHECK(cJSON_Compare(body, want, 1));
	cJSON_Delete(body);
	cJSON_Delete(want);
	h_respond(h, req->op, 202, "content-type: application/json\n", CREATED);
	/* 2. per COPY step: the upload link for its files' hash */
	req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://api.test/templates/tpl-1/files/" HELLO_HASH);
	CHECK_STR(h_header(req, "X-API-Key"), "sk-test-SECRET-1234");
	h_respond(h, req->op, 201, NULL, LINK);
	/* 3. the files' gzipped tar, PUT to the link with its headers: not the
   * API key, and no Content-Length (the transport knows the body's) */
	req = h_http_next(h);
	CHECK_STR(req->method, "PUT");
	CHECK_STR(req->url, "http://upload.test/put?sig=abc");
	CHECK_STR(h_header(req, "x-goog-meta"), "v");
	CHECK(h_header(req, "X-API-Key") == NULL && h_header(req, "Content-Length") == NULL);
	CHECK(req->body_len > 15 + 512 && (uint8_t)req->body[0] == 0x1f && (uint8_t)req->body[1] == 0x8b);
	CHECK_STR(req->body + 15, "hello.txt"); /* after the gzip header and the first stored block's */
	CHECK(memcmp(req->body + 15 + 512, "hello\n", 6) == 0);
	h_respond(h, req->op, 200, NULL, "");
	/* 4. the build, with the steps the SDK makes of the Dockerfile */
	req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://api.test/v2/templates/tpl-1/builds/b-1");
	body = cJSON_Parse(req->body);
	want = cJSON_Parse(
		"{\"fromImage\":\"e2bdev/base\",\"force\":false,\"steps\":["
		"{\"type\":\"USER\",\"args\":[\"root\"],\"force\":false},{\"type\":\"WORKDIR\",\"args\":[\"/\"],\"force\":false},"
		"{\"type\":\"RUN\",\"args\":[\"echo built > /opt/marker\"],\"force\":false},"
		"{\"type\":\"COPY\",\"args\":[\"hello.txt\",\"/opt/hello.txt\",\"\",\"\"],\"force\":false,\"filesHash\":\"" HELLO_HASH
		"\"},"
		"{\"type\":\"ENV\",\"args\":[\"GREETING\",\"hi\"],\"force\":false},{\"type\":\"WORKDIR\",\"args\":[\"/opt\"],\"force\":false},"
		"{\"type\":\"USER\",\"args\":[\"user\"],\"force\":false}]}");
	CHECK(cJSON_Compare(body, want, 1));
	cJSON_Delete(body);
	cJSON_Delete(want);
	h_respond(h, req->op, 202, NULL, NULL);
	/* 5. status and logs from an offset, every 200 ms */
	req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://api.test/templates/tpl-1/builds/b-1/status?logsOffset=0");
	h_respond(h, req->op, 200, NULL, STATUS("waiting", ""));
	CHECK_NUM(h_pending(h), 0);
	CHECK_NUM(e2bw_core_next_deadline(h->core), h->now + 200);
	h->now += 200;
	e2bw_core_tick(h->core, h->now);
	h_drain(h);
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/templates/tpl-1/builds/b-1/status?logsOffset=0");
	h_respond(h, req->op, 200, NULL,
		STATUS("building", ENTRY("[base] pulling", "base") "," ENTRY("[3] running", "3")));
	check_log(h, "[base] pulling", "base");
	check_log(h, "[3] running", "3");
	CHECK_NUM(h_pending(h), 0);
	h->now += 200;
	e2bw_core_tick(h->core, h->now);
	h_drain(h);
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/templates/tpl-1/builds/b-1/status?logsOffset=2");
	/* ready: as the SDK, the logs are read on at once until a poll brings none */
	h_respond(h, req->op, 200, NULL, STATUS("ready", ENTRY("done", "finalize")));
	check_log(h, "done", "finalize");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/templates/tpl-1/builds/b-1/status?logsOffset=3");
	h_respond(h, req->op, 200, NULL, STATUS("ready", ""));
	cJSON *r = h_send(h);
	CHECK_NUM(h_id(r), 1);
	cJSON *result = cJSON_Parse(
		"{\"template_id\":\"tpl-1\",\"name\":\"my-tpl\",\"build_id\":\"b-1\",\"status\":\"ready\"}");
	CHECK(cJSON_Compare(h_result(r), result, 1));
	cJSON_Delete(result);
	CHECK_NUM(h_pending(h), 0);
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);
	h_free(h);
}

static void test_cached_and_background(void)
{
	harness *h = ready();
	/* files the backend has are not uploaded; wait:false answers once the build runs; skip_cache forces it */
	call(h, 1, "templates.build",
		"{\"name\":\"t\",\"from_template\":\"base\",\"steps\":[{\"type\":\"COPY\",\"args\":[\"hello.txt\",\"/h\"]}],"
		"\"context\":" CONTEXT ",\"wait\":false,\"skip_cache\":true}");
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, CREATED);
	req = h_http_next(h);
	CHECK(strstr(req->url, "/templates/tpl-1/files/") != NULL);
	h_respond(h, req->op, 201, NULL, "{\"present\":true}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/templates/tpl-1/builds/b-1");
	cJSON *body = cJSON_Parse(req->body);
	CHECK(cJSON_IsTrue(field(body, "force")));
	CHECK_STR(field(body, "fromTemplate")->valuestring, "base");
	CHECK(field(body, "fromImage") == NULL);
	cJSON_Delete(body);
	h_respond(h, req->op, 202, NULL, NULL);
	cJSON *r = h_send(h);
	CHECK_STR(field(h_result(r), "status")->valuestring, "building");
	CHECK_NUM(h_pending(h), 0);
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);
	h_free(h);
}

static void test_build_failed(void)
{
	harness *h = ready();
	call(h, 1, "templates.build", BUILD_PARAMS);
	h_http *req = to_upload(h);
	h_respond(h, req->op, 200, NULL, NULL);
	req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, NULL);
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, STATUS("building", ENTRY("step one", "1") "," ENTRY("built", "3")));
	h_send(h);
	h_send(h);
	h->now += 200;
	e2bw_core_tick(h->core, h->now);
	h_drain(h);
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"error\",\"logs\":[],\"logEntries\":["
		"{\"level\":\"error\",\"message\":\"cp: cannot stat\",\"timestamp\":\"2026-01-01T00:00:02.000Z\",\"step\":\"4\"}],"
		"\"reason\":{\"message\":\"failed to copy files: exit status 1\",\"step\":\"4\",\"logEntries\":[]}}");
	cJSON *log = h_send(h);
	CHECK_STR(field(field(log, "params"), "level")->valuestring, "error");
	req = h_http_next(h); /* the tail of the log */
	CHECK_STR(req->url, "http://api.test/templates/tpl-1/builds/b-1/status?logsOffset=3");
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"error\",\"logs\":[],\"logEntries\":[]}");
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32020);
	CHECK_STR(h_error_kind(r), "build_failed");
	CHECK_STR(h_error_message(r),
		"Template build failed at step 4 (Dockerfile line 3: COPY hello.txt /opt/hello.txt): failed to copy files: exit status 1");
	CHECK_STR(data_str(r, "step"), "4");
	CHECK_STR(data_str(r, "instruction"), "COPY hello.txt /opt/hello.txt");
	CHECK_NUM(field(data_of(r), "line")->valuedouble, 3);
	CHECK_STR(data_str(r, "template_id"), "tpl-1");
	CHECK_STR(data_str(r, "build_id"), "b-1");
	const cJSON *logs = field(data_of(r), "logs");
	CHECK_NUM(cJSON_GetArraySize(logs), 3);
	CHECK_STR(cJSON_GetArrayItem(logs, 2)->valuestring, "cp: cannot stat");
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);

	/* a failure of the base names the FROM; with no step, the reason alone */
	req = to_status(h, 2, "{\"name\":\"t\",\"dockerfile\":\"\\nFROM nope:1\\nRUN x\"}");
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"error\",\"logEntries\":[],"
		"\"reason\":{\"message\":\"image not found\",\"step\":\"base\",\"logEntries\":["
		"{\"level\":\"error\",\"message\":\"manifest unknown\",\"timestamp\":\"2026-01-01T00:00:02.000Z\"}]}}");
	r = h_send(h);
	CHECK_STR(h_error_message(r),
		"Template build failed at step base (Dockerfile line 2: FROM nope:1): image not found");
	CHECK_STR(cJSON_GetArrayItem(field(data_of(r), "logs"), 0)->valuestring,
		"manifest unknown"); /* the reason's entries when none streamed */
	req = to_status(h, 3, "{\"name\":\"t\",\"from_image\":\"x\"}");
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"error\",\"logEntries\":[]}");
	r = h_send(h);
	CHECK_STR(h_error_message(r), "Template build failed: Unknown error");
	CHECK(field(data_of(r), "step") == NULL);
	h_free(h);
}

static void test_registry_credentials(void)
{
	harness *h = ready();
	call(h, 1, "templates.build",
		"{\"name\":\"t\",\"from_image\":\"registry.test/private:1\",\"registry\":{\"username\":\"robot\",\"password\":\"reg-PASSWORD-77\"},"
		"\"steps\":[{\"type\":\"RUN\",\"args\":[\"true\"]}]}");
	h_http *req = h_http_next(h);
	CHECK(strstr(req->body, "reg-PASSWORD") == NULL); /* the template request carries no credentials */
	h_respond(h, req->op, 202, NULL, CREATED);
	req = h_http_next(h);
	cJSON *body = cJSON_Parse(req->body); /* only the build itself, which must pull the image */
	cJSON *want = cJSON_Parse(
		"{\"type\":\"registry\",\"username\":\"robot\",\"password\":\"reg-PASSWORD-77\"}");
	CHECK(cJSON_Compare(field(body, "fromImageRegistry"), want, 1));
	cJSON_Delete(body);
	cJSON_Delete(want);
	h_respond(h, req->op, 202, NULL, NULL);
	req = h_http_next(h);
	/* a backend that echoes the password, whole or cut, in logs and reasons */
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"error\",\"logEntries\":["
		"{\"level\":\"info\",\"message\":\"login robot:reg-PASSWORD-77\",\"timestamp\":\"2026-01-01T00:00:01.000Z\"}],"
		"\"reason\":{\"message\":\"pull failed with reg-PASSWORD-77 for robot\",\"step\":\"base\"}}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b-1\",\"templateID\":\"tpl-1\",\"status\":\"error\",\"logEntries\":[]}");
	cJSON *log = h_send(h);
	CHECK(strstr(h_send_text_last(h), "reg-PASSWORD") == NULL);
	CHECK_STR(field(field(log, "params"), "message")->valuestring, "login robot:***");
	cJSON *r = h_send(h);
	CHECK(strstr(h_send_text_last(h), "PASSWORD") == NULL);
	CHECK(strstr(h_error_message(r), "pull failed with *** for robot") != NULL);
	/* nor in any later message of the session */
	call(h, 2, "templates.get", "{\"template_id\":\"reg-PASSWORD-77\",\"build_id\":\"b\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"no reg-PASSWORD-77\"}");
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "PASSWORD") == NULL);
	h_free(h);
}

/* Fails the build at one of its requests, in one way; the call ends with
 * one typed error and nothing left running. */
enum {
	AT_CREATE,
	AT_LINK,
	AT_UPLOAD,
	AT_TRIGGER,
	AT_STATUS
};
enum {
	BY_500,
	BY_404,
	BY_401,
	BY_GARBAGE,
	BY_CUT,
	BY_DEADLINE
};

static void fail_at(int at, int how, int code, const char *kind, const char *sdk_code, const char *says)
{
	harness *h = ready();
	call(h, 1, "templates.build", BUILD_PARAMS);
	h_http *req = h_http_next(h);
	static const char *const answers[] = {CREATED, LINK, "", NULL, NULL};
	static const int statuses[] = {202, 201, 200, 202};
	for (int i = 0; i < at; i++) {
		h_respond(h, req->op, statuses[i], NULL, answers[i]);
		req = h_http_next(h);
	}
	switch (how) {
	case BY_500:
		h_respond(h, req->op, 500, NULL, "{\"code\":500,\"message\":\"boom\"}");
		break;
	case BY_404:
		h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"nothing here\"}");
		break;
	case BY_401:
		h_respond(h, req->op, 401, NULL, "{\"code\":401,\"message\":\"Invalid API key\"}");
		break;
	case BY_GARBAGE:
		h_respond(h, req->op,
			at == AT_CREATE         ? 202
				: at == AT_LINK ? 201
						: 200,
			NULL, "<html>oops</html>");
		break;
	case BY_CUT:
		e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
		e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now);
		h_drain(h);
		break;
	case BY_DEADLINE:
		h->now += 10001; /* request_timeout: 10 s */
		e2bw_core_tick(h->core, h->now);
		h_drain(h);
		break;
	}
	cJSON *r = h_send(h);
	CHECK_NUM(h_id(r), 1);
	CHECK_NUM(h_error_code(r), code);
	CHECK_STR(h_error_kind(r), kind);
	if (sdk_code)
		CHECK_STR(data_str(r, "sdk_code"), sdk_code);
	else
		CHECK(data_str(r, "sdk_code") == NULL);
	const char *msg = h_error_message(r);
	CHECK(msg && strstr(msg, says) != NULL);
	if (!msg || !strstr(msg, says))
		fprintf(stderr, "    at %d how %d: %s\n", at, how, msg ? msg : "(no message)");
	CHECK(strstr(h_send_text_last(h), "sk-test-SECRET") == NULL);
	CHECK(h_http_next(h) == NULL);
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);
	h_free(h);
}

static void test_failures(void)
{
	/* a 5xx, anywhere */
	fail_at(AT_CREATE, BY_500, -32000, "backend_error", NULL,
		"failed POST /v3/templates (HTTP 500): boom");
	fail_at(AT_LINK, BY_500, -32000, "backend_error", NULL,
		"GET /templates/tpl-1/files/" HELLO_HASH " (HTTP 500)");
	fail_at(AT_UPLOAD, BY_500, -32000, "backend_error", NULL,
		"failed the upload of 'hello.txt' (HTTP 500)");
	fail_at(AT_TRIGGER, BY_500, -32000, "backend_error", NULL,
		"POST /v2/templates/tpl-1/builds/b-1 (HTTP 500)");
	fail_at(AT_STATUS, BY_500, -32000, "backend_error", NULL,
		"GET /templates/tpl-1/builds/b-1/status (HTTP 500)");
	/* a 404: no template API at all, else a template that is gone */
	fail_at(AT_CREATE, BY_404, -32003, "unsupported", "E8004",
		"has no template API (POST /v3/templates answered HTTP 404)");
	fail_at(AT_LINK, BY_404, -32002, "not_found", "E4001", "Template 'tpl-1' not found");
	fail_at(AT_UPLOAD, BY_404, -32002, "not_found", NULL,
		"Not found (HTTP 404) for the upload of 'hello.txt'");
	fail_at(AT_TRIGGER, BY_404, -32002, "not_found", "E4001", "Template 'tpl-1' not found");
	fail_at(AT_STATUS, BY_404, -32002, "not_found", "E4001", "Template 'tpl-1' not found");
	/* a refused key */
	fail_at(AT_CREATE, BY_401, -32010, "unauthenticated", NULL, "refused the API key (HTTP 401)");
	fail_at(AT_STATUS, BY_401, -32010, "unauthenticated", NULL, "refused the API key (HTTP 401)");
	/* an answer that is not the JSON its schema gives */
	fail_at(AT_CREATE, BY_GARBAGE, -32017, "bad_response", NULL,
		"invalid response to POST /v3/templates");
	fail_at(AT_LINK, BY_GARBAGE, -32017, "bad_response", NULL,
		"invalid response to GET /templates/tpl-1/files/");
	fail_at(AT_STATUS, BY_GARBAGE, -32017, "bad_response", NULL,
		"invalid response to GET /templates/tpl-1/builds/b-1/status");
	/* a cut connection, and no answer within request_timeout */
	for (int at = AT_CREATE; at <= AT_STATUS; at++) {
		fail_at(at, BY_CUT, -32012, "unreachable", NULL, "connection cut while reading the response");
		fail_at(at, BY_DEADLINE, -32013, "timeout", NULL, "did not answer");
	}
}

static void build_answered(const char *params, const char *created, const char *link, const char *status,
	int code, const char *says)
{
	harness *h = ready();
	call(h, 1, "templates.build", params);
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, created);
	if (link) {
		req = h_http_next(h);
		h_respond(h, req->op, 201, NULL, link);
	}
	if (status) {
		req = h_http_next(h);
		h_respond(h, req->op, 202, NULL, NULL);
		req = h_http_next(h);
		h_respond(h, req->op, 200, NULL, status);
	}
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), code);
	CHECK(h_error_message(r) && strstr(h_error_message(r), says) != NULL);
	if (!h_error_message(r) || !strstr(h_error_message(r), says))
		fprintf(stderr, "    got: %s\n", h_send_text_last(h));
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);
	h_free(h);
}

static void test_odd_answers(void)
{
	build_answered(BUILD_PARAMS, "{\"templateID\":\"tpl-1\"}", NULL, NULL, -32017,
		"has no templateID or buildID");
	build_answered(BUILD_PARAMS, CREATED, "{\"present\":false,\"url\":\"file:///etc/passwd\"}", NULL,
		-32017, "is not an http(s) URL");
	build_answered(BUILD_PARAMS, CREATED, "{\"present\":false,\"url\":\"http://x/a b\"}", NULL, -32017,
		"is not an http(s) URL");
	build_answered(BUILD_PARAMS, CREATED, "[1]", NULL, -32017, "expected a JSON object");
	build_answered("{\"name\":\"t\",\"from_image\":\"x\"}", CREATED, NULL, STATUS("sleeping", ""), -32017,
		"no status of building, waiting, ready or error");
	build_answered("{\"name\":\"t\",\"from_image\":\"x\"}", CREATED, NULL,
		"{\"status\":\"ready\",\"logEntries\":{}}", -32017, "logEntries that are not an array");
	/* a link without a URL is taken as "already there", as the SDK takes it */
	harness *h = ready();
	call(h, 1, "templates.build", BUILD_PARAMS);
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 202, NULL, CREATED);
	req = h_http_next(h);
	h_respond(h, req->op, 201, NULL, "{\"present\":false}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/templates/tpl-1/builds/b-1");
	/* entries without message or timestamp are no log entries; an unknown level is info */
	h_respond(h, req->op, 202, NULL, NULL);
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL,
		STATUS("building",
			"{\"level\":\"info\"},7,{\"message\":\"m\"},{\"level\":\"loud\",\"message\":\"x\",\"timestamp\":\"t\"}"));
	cJSON *log = h_send(h);
	CHECK_STR(field(field(log, "params"), "level")->valuestring, "info");
	CHECK_STR(field(field(log, "params"), "message")->valuestring, "x");
	CHECK_NUM(h_pending(h), 0);
	h->now += 200;
	e2bw_core_tick(h->core, h->now);
	h_drain(h);
	req = h_http_next(h);
	CHECK_STR(req->url,
		"http://api.test/templates/tpl-1/builds/b-1/status?logsOffset=4"); /* every entry counts for the offset */
	h_free(h);
}

static void test_wait_timeout_and_shutdown(void)
{
	harness *h = ready();
	h_http *req = to_status(h, 1, "{\"name\":\"t\",\"from_image\":\"x\",\"timeout\":1}");
	for (int i = 0; i < 5; i++) { /* building for a second: polls at 0, 200 ... 1000 ms */
		if (i)
			req = h_http_next(h);
		CHECK(req != NULL);
		if (!req)
			break;
		h_respond(h, req->op, 200, NULL, STATUS("building", ""));
		h->now += 200;
		e2bw_core_tick(h->core, h->now);
		h_drain(h);
	}
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, STATUS("building", ""));
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32013);
	CHECK(strstr(h_error_message(r), "did not finish within 1 s (timeout); it goes on in the backend") !=
		NULL);
	CHECK_STR(data_str(r, "build_id"), "b-1");
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);

	/* shutdown while a build waits between polls: canceled, the timer gone */
	req = to_status(h, 2, "{\"name\":\"t\",\"from_image\":\"x\"}");
	h_respond(h, req->op, 200, NULL, STATUS("building", ""));
	CHECK(e2bw_core_next_deadline(h->core) > 0);
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"shutdown\"}");
	r = h_send(h);
	CHECK_NUM(h_id(r), 2);
	CHECK_STR(h_error_kind(r), "canceled");
	CHECK(h_result(h_send(h)) != NULL);
	CHECK_NUM(e2bw_core_next_deadline(h->core), -1);
	h_free(h);
}

static void test_bad_params(void)
{
	harness *h = ready();
	static const struct {
		const char *params, *field;
	} cases[] = {
		{"{\"dockerfile\":\"FROM a\"}", "name"},
		{"{\"name\":\"\",\"from_image\":\"a\"}", "name"},
		{"{\"name\":\"t\",\"steps\":{}}", "steps"},
		{"{\"name\":\"t\",\"from_image\":\"a\",\"context\":\"x\"}", "context"},
		{"{\"name\":\"t\",\"from_image\":\"a\",\"cpu\":0}", "cpu"},
		{"{\"name\":\"t\",\"from_image\":\"a\",\"wait\":\"yes\"}", "wait"},
		{"{\"name\":\"t\",\"dockerFile\":\"FROM a\"}", "dockerFile"}, /* a near miss: did you mean */
		{"{\"name\":\"t\",\"dockerfile\":\"FROM a\\nFROM b\"}", "dockerfile"},
		{"{\"name\":\"t\",\"dockerfile\":\"FROM a\\nCOPY x /y\"}", "dockerfile"},
		{"{\"name\":\"t\",\"from_image\":\"a\",\"context\":[{\"path\":\"../x\",\"content\":\"\"}]}",
			"context[0].path"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		call(h, 1, "templates.build", cases[i].params);
		cJSON *r = h_send(h);
		CHECK_NUM(h_error_code(r), -32602);
		CHECK_STR(data_str(r, "field"), cases[i].field);
	}
	call(h, 2, "templates.get", "{\"template_id\":\"t\"}");
	CHECK_STR(data_str(h_send(h), "field"), "build_id");
	call(h, 3, "templates.get", "{\"template_id\":\"t\",\"build_id\":\"b\",\"logs_offset\":-1}");
	CHECK_STR(data_str(h_send(h), "field"), "logs_offset");
	call(h, 4, "templates.delete", "{}");
	CHECK_STR(data_str(h_send(h), "field"), "template_id");
	call(h, 5, "templates.list", "{\"limit\":101}");
	CHECK_STR(data_str(h_send(h), "field"), "limit");
	CHECK_NUM(h_pending(h), 0); /* none of it reached the backend */
	h_free(h);
}

static void test_get_list_delete(void)
{
	harness *h = ready();
	/* get: one status read from an offset, ids encoded into the path */
	call(h, 1, "templates.get", "{\"template_id\":\"my tpl\",\"build_id\":\"b/1\",\"logs_offset\":5}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://api.test/templates/my%20tpl/builds/b%2F1/status?logsOffset=5");
	h_respond(h, req->op, 200, NULL,
		"{\"buildID\":\"b/1\",\"templateID\":\"my tpl\",\"status\":\"error\",\"logs\":[],\"logEntries\":[" ENTRY(
			"six", "2") "],"
				    "\"reason\":{\"message\":\"failed\",\"step\":\"2\",\"logEntries\":[]}}");
	cJSON *want = cJSON_Parse(
		"{\"template_id\":\"my tpl\",\"build_id\":\"b/1\",\"status\":\"error\",\"logs\":[{\"level\":\"info\",\"message\":\"six\","
		"\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"step\":\"2\"}],\"logs_offset\":6,\"reason\":{\"message\":\"failed\",\"step\":\"2\"}}");
	CHECK(cJSON_Compare(h_result(h_send(h)), want, 1));
	cJSON_Delete(want);
	call(h, 2, "templates.get", "{\"template_id\":\"gone\",\"build_id\":\"b\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"template gone not found\"}");
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(data_str(r, "sdk_code"), "E4001");
	call(h, 3, "templates.get", "{\"template_id\":\"t\",\"build_id\":\"b\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "{\"logEntries\":[]}");
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");

	/* list: one page of E2B's Template records, the cursor from X-Next-Token */
	call(h, 4, "templates.list", "{\"limit\":2,\"next_token\":\"a b\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/templates?limit=2&nextToken=a%20b");
	h_respond(h, req->op, 200, "X-Next-Token: t2\n",
		"[{\"aliases\":[\"my-tpl\"],\"buildCount\":1,\"buildID\":\"b-1\",\"buildStatus\":\"ready\",\"cpuCount\":2,\"createdAt\":\"2026-01-01T00:00:00Z\","
		"\"createdBy\":null,\"diskSizeMB\":1024,\"envdVersion\":\"0.6.13\",\"lastSpawnedAt\":null,\"memoryMB\":512,\"names\":[\"my-tpl\"],"
		"\"public\":false,\"spawnCount\":0,\"templateID\":\"tpl-1\",\"updatedAt\":\"2026-01-01T00:00:01Z\"}]");
	want = cJSON_Parse(
		"{\"templates\":[{\"template_id\":\"tpl-1\",\"names\":[\"my-tpl\"],\"build_id\":\"b-1\",\"status\":\"ready\",\"cpu\":2,\"memory\":512,"
		"\"disk\":1024,\"public\":false,\"created_at\":\"2026-01-01T00:00:00Z\",\"updated_at\":\"2026-01-01T00:00:01Z\","
		"\"envd_version\":\"0.6.13\"}],\"next_token\":\"t2\"}");
	CHECK(cJSON_Compare(h_result(h_send(h)), want, 1));
	cJSON_Delete(want);
	call(h, 5, "templates.list", "{}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/v2/templates");
	h_respond(h, req->op, 200, NULL, "[]");
	CHECK(cJSON_IsNull(field(h_result(h_send(h)), "next_token")));
	call(h, 6, "templates.list", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "[{\"names\":[]}]");
	CHECK(strstr(h_error_message(h_send(h)), "a template without templateID") != NULL);
	call(h, 7, "templates.list", "{}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "");
	CHECK_NUM(h_error_code(h_send(h)), -32003); /* a backend without the template API */

	/* delete: 204, and a template that is not there is E4001 */
	call(h, 8, "templates.delete", "{\"template_id\":\"tpl-1\"}");
	req = h_http_next(h);
	CHECK_STR(req->method, "DELETE");
	CHECK_STR(req->url, "http://api.test/templates/tpl-1");
	CHECK(req->body == NULL);
	h_respond(h, req->op, 204, NULL, NULL);
	want = cJSON_Parse("{\"template_id\":\"tpl-1\",\"deleted\":true}");
	CHECK(cJSON_Compare(h_result(h_send(h)), want, 1));
	cJSON_Delete(want);
	call(h, 9, "templates.delete", "{\"template_id\":\"tpl-1\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"not found\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(data_str(r, "sdk_code"), "E4001");
	CHECK(strstr(h_error_message(r), "Template 'tpl-1' not found") != NULL);
	h_free(h);
}

void suite_templates(void)
{
	test_declared();
	test_build();
	test_cached_and_background();
	test_build_failed();
	test_registry_credentials();
	test_failures();
	test_odd_answers();
	test_wait_timeout_and_shutdown();
	test_bad_params();
	test_get_list_delete();
}
