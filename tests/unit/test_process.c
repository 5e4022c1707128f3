/* exec.*, process.*, pty.* against hand-played envd answers: requests as
 * envd expects them, streams decoded the same at every chunking, exactly one
 * ending per call or per followed process, deadlines and kills. */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "envelope.h"
#include "harness.h"
#include "suites.h"

#define CONFIG \
	"{\"api_key\":\"sk-test-SECRET-1234\",\"api_url\":\"http://api.test\",\"sandbox_url\":\"http://envd.test\",\"request_timeout\":10,\"keepalive_interval\":2}"
#define DETAIL \
	"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"running\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"tok-ENVD-SECRET\"}"

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

/* A ready core that knows sbx1 (learned through GET /sandboxes/sbx1). */
static harness *ready(void)
{
	harness *h = h_new();
	h_init(h, CONFIG);
	call(h, 90, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, DETAIL);
	h_send(h);
	return h;
}

static void frame(e2bw_buf *b, int flags, const char *json)
{
	e2bw_env_encode(b, (uint8_t)flags, json, strlen(json));
}

static void data_frame(e2bw_buf *b, const char *stream, const char *bytes, size_t n)
{
	e2bw_buf b64 = {0}, json = {0};
	e2bw_base64_encode(&b64, (const uint8_t *)bytes, n);
	e2bw_buf_append_str(&json, "{\"event\":{\"data\":{\"");
	e2bw_buf_append_str(&json, stream);
	e2bw_buf_append_str(&json, "\":\"");
	e2bw_buf_append_str(&json, b64.data ? b64.data : "");
	e2bw_buf_append_str(&json, "\"}}}");
	frame(b, 0, json.data);
	e2bw_buf_free(&b64);
	e2bw_buf_free(&json);
}

/* Feeds body to op split at s and t; returns nothing, drains. */
static void feed_split(harness *h, uint32_t op, const e2bw_buf *body, size_t s, size_t t, int end)
{
	e2bw_core_http_head(h->core, op, 200, "content-type: application/connect+json\n", 39, h->now);
	const uint8_t *p = (const uint8_t *)body->data;
	size_t cuts[3] = {s, t, body->len};
	size_t pos = 0;
	for (int i = 0; i < 3; i++) {
		if (cuts[i] > pos)
			e2bw_core_http_body(h->core, op, p + pos, cuts[i] - pos, h->now);
		pos = cuts[i] > pos ? cuts[i] : pos;
	}
	if (end)
		e2bw_core_http_end(h->core, op, h->now);
	h_drain(h);
}

static void test_run_request_and_result(void)
{
	harness *h = h_new();
	h_init(h, CONFIG);
	call(h, 1, "exec.run",
		"{\"sandbox_id\":\"sbx1\",\"command\":\"echo hi; echo warn >&2; exit 3\",\"cwd\":\"/tmp\",\"envs\":{\"FOO\":\"bar\"},\"user\":\"root\",\"timeout\":30}");
	h_http *get = h_http_next(h); /* the sandbox is not known yet: learn its envd token */
	CHECK_STR(get->url, "http://api.test/sandboxes/sbx1");
	h_respond(h, get->op, 200, NULL, DETAIL);
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://envd.test/process.Process/Start");
	CHECK_STR(h_header(req, "Content-Type"), "application/connect+json");
	CHECK_STR(h_header(req, "Connect-Protocol-Version"), "1");
	CHECK_STR(h_header(req, "X-Access-Token"), "tok-ENVD-SECRET");
	CHECK_STR(h_header(req, "E2b-Sandbox-Id"), "sbx1");
	CHECK_STR(h_header(req, "E2b-Sandbox-Port"), "49983");
	CHECK_STR(h_header(req, "Authorization"), "Basic cm9vdDo="); /* base64("root:") */
	CHECK_STR(h_header(req, "Keepalive-Ping-Interval"), "2");
	CHECK_STR(h_header(req, "Connect-Timeout-Ms"), "35000"); /* envd's backstop after ours */
	CHECK(h_header(req, "X-API-Key") == NULL);               /* the API key never goes to envd */
	/* the body is one envelope holding the StartRequest */
	CHECK(req->body && req->body[0] == 0);
	cJSON *start = cJSON_Parse(req->body + 5);
	const cJSON *process = field(start, "process");
	CHECK_STR(field(process, "cmd")->valuestring, "/bin/bash");
	CHECK_STR(cJSON_GetArrayItem(field(process, "args"), 2)->valuestring,
		"echo hi; echo warn >&2; exit 3");
	CHECK_STR(field(field(process, "envs"), "FOO")->valuestring, "bar");
	CHECK_STR(field(process, "cwd")->valuestring, "/tmp");
	CHECK(cJSON_IsFalse(field(start, "stdin")));
	cJSON_Delete(start);
	uint32_t op = req->op;

	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":103}}}");
	data_frame(&body, "stdout", "hi\n", 3);
	frame(&body, 0, "{\"event\":{\"keepalive\":{}}}");
	data_frame(&body, "stderr", "warn\n", 5);
	frame(&body, 0,
		"{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true,\"status\":\"exit status 3\",\"error\":\"exit status 3\"}}}");
	frame(&body, E2BW_ENV_FLAG_END_STREAM, "{}");
	feed_split(h, op, &body, 17, 40, 1);
	cJSON *r = h_send(h);
	const cJSON *res = h_result(r);
	CHECK_NUM(h_id(r), 1);
	CHECK_NUM(field(res, "exit_code")->valuedouble, 3); /* a non-zero exit is data */
	CHECK_STR(field(res, "stdout")->valuestring, "hi\n");
	CHECK_STR(field(res, "stderr")->valuestring, "warn\n");
	CHECK_STR(field(res, "error")->valuestring, "exit status 3");
	CHECK_NUM(field(res, "pid")->valuedouble, 103);
	CHECK(cJSON_IsNull(field(res, "signal")));
	CHECK(h_pending(h) == 0);
	CHECK(e2bw_core_next_deadline(h->core) == -1);
	e2bw_buf_free(&body);
	h_free(h);
}

/* The same stream at every pair of split points gives the same answer. */
static void test_run_every_chunking(void)
{
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":\"7\"}}}");
	data_frame(&body, "stdout", "caf\xc3", 4); /* é split across two data events */
	data_frame(&body, "stdout", "\xa9 \xff!", 4);
	frame(&body, 0, "{\"event\":{\"keepalive\":{}}}");
	data_frame(&body, "stderr", "", 0);
	frame(&body, 0, "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}");
	frame(&body, E2BW_ENV_FLAG_END_STREAM, "{\"metadata\":{\"k\":[\"v\"]}}");
	int runs = 0, good = 0;
	for (size_t s = 0; s <= body.len; s += 3)
		for (size_t t = s; t <= body.len; t += 7) {
			harness *h = ready();
			call(h, 1, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}");
			h_http *req = h_http_next(h);
			feed_split(h, req->op, &body, s, t, 1);
			cJSON *r = h_send(h);
			const cJSON *res = h_result(r);
			runs++;
			if (runs == 1 && !res)
				fprintf(stderr, "    first chunking: %s\n", h_send_text_last(h));
			if (res && field(res, "exit_code")->valuedouble == 0 &&
				!strcmp(field(res, "stdout")->valuestring, "caf\xc3\xa9 \xef\xbf\xbd!") &&
				!strcmp(field(res, "stderr")->valuestring, "") && h_pending(h) == 0)
				good++;
			h_free(h);
		}
	CHECK_NUM(good, runs);
	e2bw_buf_free(&body);
}

/* Data events in every shape protobuf-JSON allows read the same, whether
 * the fast scanner takes them or cJSON does. */
static void test_data_event_shapes(void)
{
	static const char *const shapes[] = {
		"{\"event\":{\"data\":{\"stdout\":\"aGk=\"}}}",
		" { \"event\" :\n{ \"data\" : { \"stdout\" :\t\"aGk=\" } } } ",
		"{\"event\":{\"data\":{\"stdout\":\"aGk\\u003d\"}}}",   /* an escape: cJSON's way */
		"{\"event\":{\"data\":{\"stdout\":\"aGk\"}}}",          /* unpadded */
		"{\"event\":{\"data\":{\"stdout\":\"aGk=\",\"x\":1}}}", /* an extra field */
		"{\"event\":{\"data\":{\"stdout\":\"aG-_\"}}}",         /* URL-safe alphabet */
	};
	static const char *const want[] = {"hi", "hi", "hi", "hi", "hi", "ho\xbf"};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		harness *h = ready();
		call(h, 1, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\",\"encoding\":\"base64\"}");
		h_http *req = h_http_next(h);
		e2bw_buf body = {0};
		frame(&body, 0, "{\"event\":{\"start\":{\"pid\":1}}}");
		frame(&body, 0, shapes[i]);
		frame(&body, 0, "{\"event\":{\"end\":{\"exited\":true}}}");
		frame(&body, E2BW_ENV_FLAG_END_STREAM, "{}");
		feed_split(h, req->op, &body, 0, 0, 1);
		const cJSON *res = h_result(h_send(h));
		e2bw_buf expect = {0};
		e2bw_base64_encode(&expect, (const uint8_t *)want[i], strlen(want[i]));
		CHECK(res && !strcmp(field(res, "stdout")->valuestring, expect.data));
		if (!res || strcmp(field(res, "stdout")->valuestring, expect.data))
			fprintf(stderr, "    shape %zu: %s\n", i, h_send_text_last(h));
		e2bw_buf_free(&expect);
		e2bw_buf_free(&body);
		h_free(h);
	}
	/* not base64 at all: a typed error, by either path */
	harness *h = ready();
	call(h, 1, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}");
	h_http *req = h_http_next(h);
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":1}}}");
	frame(&body, 0, "{\"event\":{\"data\":{\"stdout\":\"a!b=\"}}}");
	feed_split(h, req->op, &body, 0, 0, 0);
	cJSON *r = h_send(h);
	CHECK_STR(h_error_kind(r), "bad_response");
	CHECK(strstr(h_error_message(r), "not base64") != NULL);
	e2bw_buf_free(&body);
	h_free(h);
}

static void test_run_failures(void)
{
	static const struct {
		const char *name;
		int status;
		int cut;          /* bytes to drop from the end */
		int flags_mod;    /* corrupt the last frame's flags */
		const char *tail; /* frames after start */
		const char *kind;
	} cases[] = {
		{"no end-stream frame", 200, 0, 0, "{\"event\":{\"end\":{\"exited\":true}}}", "bad_response"},
		{"cut mid-frame", 200, 3, 0, "{\"event\":{\"end\":{\"exited\":true}}}", "bad_response"},
		{"compressed frame", 200, 0, 1, "{\"event\":{\"end\":{\"exited\":true}}}", "bad_response"},
		{"garbage JSON", 200, 0, 0, "{not json", "bad_response"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		harness *h = ready();
		call(h, 1, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}");
		h_http *req = h_http_next(h);
		e2bw_buf body = {0};
		frame(&body, 0, "{\"event\":{\"start\":{\"pid\":9}}}");
		size_t last = body.len;
		frame(&body, 0, cases[i].tail);
		if (cases[i].flags_mod)
			body.data[last] = 1;
		body.len -= (size_t)cases[i].cut;
		feed_split(h, req->op, &body, 0, 0, 1);
		cJSON *r = h_send(h);
		CHECK_STR(h_error_kind(r), cases[i].kind);
		if (!r || !h_error_kind(r) || strcmp(h_error_kind(r), cases[i].kind))
			fprintf(stderr, "    case: %s\n", cases[i].name);
		CHECK(h_send(h) == NULL); /* exactly one answer */
		e2bw_buf_free(&body);
		h_free(h);
	}

	/* end-stream error before start: typed by its Connect code */
	harness *h = ready();
	call(h, 1, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\",\"cwd\":\"/nope\"}");
	h_http *req = h_http_next(h);
	e2bw_buf body = {0};
	frame(&body, E2BW_ENV_FLAG_END_STREAM,
		"{\"error\":{\"code\":\"invalid_argument\",\"message\":\"cwd '/nope' does not exist\"}}");
	feed_split(h, req->op, &body, 2, 9, 1);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK_STR(h_error_kind(r), "invalid_argument");
	CHECK(strstr(h_error_message(r), "cwd '/nope' does not exist") != NULL);
	e2bw_buf_free(&body);

	/* the sandbox proxy's 502, and the control plane's 404: gone → E2009
   * (test_paused_is_not_gone: the other answers) */
	call(h, 2, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 502, NULL,
		"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox was not found\",\"code\":502}");
	CHECK(h_send(h) == NULL);
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1");
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"sandbox not found\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"),
			  "sdk_code")
			  ->valuestring,
		"E2009");
	h_free(h);
	h = ready();
	/* any other 502 (a load balancer's HTML page, a closed port) says nothing
   * about the sandbox: unreachable, not "gone" */
	static const char *const other_502[] = {"<html><body>502 Bad Gateway</body></html>",
		"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox is running but port is not open\",\"port\":49983,\"code\":502}"};
	for (int i = 0; i < 2; i++) {
		call(h, 20 + i, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}");
		req = h_http_next(h);
		h_respond(h, req->op, 502, NULL, other_502[i]);
		r = h_send(h);
		CHECK_NUM(h_error_code(r), -32012);
		CHECK_STR(h_error_kind(r), "unreachable");
	}
	/* envd refusing the token: unauthenticated, and no token in the message */
	call(h, 3, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 401, NULL, "{\"code\":401,\"message\":\"bad token tok-ENVD-SECRET\"}");
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "unauthenticated");
	CHECK(strstr(h_send_text_last(h), "tok-ENVD-SECRET") == NULL);
	h_free(h);

	/* a missing sandbox is E2009 before any envd request */
	h = h_new();
	h_init(h, CONFIG);
	call(h, 1, "exec.run", "{\"sandbox_id\":\"gone\",\"command\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK(h_http_next(h) == NULL);
	/* a paused one is unavailable until resumed */
	call(h, 2, "exec.start", "{\"sandbox_id\":\"sbx2\",\"command\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "{\"sandboxID\":\"sbx2\",\"state\":\"paused\"}");
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "unavailable");
	CHECK(strstr(h_error_message(r), "paused") != NULL);
	CHECK_STR(cJSON_GetStringValue(
			  cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"),
				  "status")),
		"paused");
	h_free(h);
}

/* A sandbox this core knows, paused since (by another client, or by this
 * one): envd's sandbox proxy answers 502 "not found" for every data-plane
 * call, and the core asks the control plane which it is, so a host can tell
 * paused (unavailable, data.status "paused") from gone (E2009). */
static void test_paused_is_not_gone(void)
{
	static const char *const calls[][2] = {
		{"exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}"}, /* a stream, before its answer */
		{"exec.start", "{\"sandbox_id\":\"sbx1\",\"command\":\"x\"}"},
		{"pty.open", "{\"sandbox_id\":\"sbx1\",\"cols\":80,\"rows\":24}"},
		{"process.list", "{\"sandbox_id\":\"sbx1\"}"}, /* unary */
		{"process.kill", "{\"sandbox_id\":\"sbx1\",\"pid\":7}"},
	};
	static const struct {
		int status;
		const char *body;
		int code;
		const char *kind, *state;
	} answers[] = {
		{200, "{\"sandboxID\":\"sbx1\",\"state\":\"paused\"}", -32015, "unavailable", "paused"},
		{404, "{\"code\":404,\"message\":\"sandbox not found\"}", -32002, "not_found", NULL},
		/* running: the proxy has not caught up with a resume */
		{200, "{\"sandboxID\":\"sbx1\",\"state\":\"running\"}", -32015, "unavailable", "running"},
		/* the control plane says nothing new: the proxy's answer stands */
		{500, "{\"code\":500,\"message\":\"boom\"}", -32002, "not_found", NULL},
	};
	for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
		for (size_t a = 0; a < sizeof answers / sizeof answers[0]; a++) {
			harness *h = ready();
			call(h, 1, calls[c][0], calls[c][1]);
			h_http *req = h_http_next(h);
			CHECK(req && strstr(req->url, "http://envd.test/") == req->url);
			if (!req) {
				h_free(h);
				continue;
			}
			h_respond(h, req->op, 502, NULL,
				"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox was not found\",\"code\":502}");
			CHECK(h_send(h) == NULL); /* not answered yet: the control plane is asked */
			req = h_http_next(h);
			CHECK(req != NULL);
			if (!req) {
				h_free(h);
				continue;
			}
			CHECK_STR(req->method, "GET");
			CHECK_STR(req->url, "http://api.test/sandboxes/sbx1");
			h_respond(h, req->op, answers[a].status, NULL, answers[a].body);
			cJSON *r = h_send(h);
			CHECK_NUM(h_error_code(r), answers[a].code);
			CHECK_STR(h_error_kind(r), answers[a].kind);
			const cJSON *data = field(field(r, "error"), "data");
			if (answers[a].state) {
				CHECK_STR(cJSON_GetStringValue(field(data, "status")), answers[a].state);
			} else {
				CHECK_STR(cJSON_GetStringValue(field(data, "sdk_code")), "E2009");
				CHECK(field(data, "status") == NULL);
			}
			if (answers[a].state && !strcmp(answers[a].state, "paused"))
				CHECK(strstr(h_error_message(r), "paused: resume it") != NULL);
			CHECK(h_send(h) == NULL); /* exactly one answer */
			CHECK(h_http_next(h) == NULL);
			h_free(h);
		}
	}
	/* the control plane cannot be reached: that is the answer, once */
	harness *h = ready();
	call(h, 1, "process.list", "{\"sandbox_id\":\"sbx1\"}");
	h_respond(h, h_http_next(h)->op, 502, NULL,
		"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox was not found\",\"code\":502}");
	e2bw_core_http_fail(h->core, h_http_next(h)->op, E2BW_NET_REFUSED, h->now);
	h_drain(h);
	CHECK_STR(h_error_kind(h_send(h)), "unreachable");
	CHECK(h_send(h) == NULL);
	h_free(h);
}

static void test_run_timeout_and_stdin(void)
{
	harness *h = ready();
	call(h, 1, "exec.run",
		"{\"sandbox_id\":\"sbx1\",\"command\":\"cat; sleep 100\",\"timeout\":5,\"stdin\":\"hello\"}");
	h_http *req = h_http_next(h);
	cJSON *start = cJSON_Parse(req->body + 5);
	CHECK(cJSON_IsTrue(field(start, "stdin")));
	cJSON_Delete(start);
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":44}}}");
	feed_split(h, req->op, &body, 0, 0, 0);
	h_http *input = h_http_next(h), *close = h_http_next(h); /* stdin, then end of stdin, in order */
	CHECK_STR(input->url, "http://envd.test/process.Process/SendInput");
	CHECK_STR(input->body, "{\"process\":{\"pid\":44},\"input\":{\"stdin\":\"aGVsbG8=\"}}");
	CHECK_STR(h_header(input, "Content-Type"), "application/json");
	CHECK_STR(close->url, "http://envd.test/process.Process/CloseStdin");
	h_respond(h, input->op, 200, NULL, "{}");
	h_respond(h, close->op, 200, NULL, "{}");
	CHECK(e2bw_core_next_deadline(h->core) <= h->now + 5000);
	e2bw_core_tick(h->core, h->now + 5000);
	h_drain(h);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32013);
	CHECK_STR(h_error_kind(r), "timeout");
	CHECK(strstr(h_error_message(r), "timeout of 5 s") != NULL);
	h_http *kill = h_http_next(h); /* the process is stopped in the sandbox */
	CHECK_STR(kill->url, "http://envd.test/process.Process/SendSignal");
	CHECK_STR(kill->body, "{\"process\":{\"pid\":44},\"signal\":\"SIGNAL_SIGKILL\"}");
	CHECK(h_cancel_next(h) == req->op);
	CHECK(h_send(h) == NULL);
	h_respond(h, kill->op, 200, NULL, "{}");
	CHECK(h_pending(h) == 0);
	CHECK(e2bw_core_next_deadline(h->core) == -1);
	e2bw_buf_free(&body);
	h_free(h);
}

/* Cross-field checks are the table's: base64 stdin that is not base64 is
 * refused before anything reaches the backend (it used to start the
 * process with empty stdin). */
static void test_data_checked_against_encoding(void)
{
	harness *h = h_new();
	h_init(h, CONFIG);
	call(h, 1, "exec.run",
		"{\"sandbox_id\":\"sbx1\",\"command\":\"cat\",\"stdin\":\"*not base64*\",\"encoding\":\"base64\"}");
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK(strstr(h_send_text_last(h), "\"field\":\"stdin\"") != NULL);
	call(h, 2, "process.stdin",
		"{\"sandbox_id\":\"sbx1\",\"pid\":5,\"data\":\"*\",\"encoding\":\"base64\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32602);
	call(h, 3, "pty.input",
		"{\"sandbox_id\":\"sbx1\",\"pid\":5,\"data\":\"%%%\",\"encoding\":\"base64\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32602);
	CHECK(h_pending(h) == 0); /* no request of any kind went out */
	/* the same text is fine as UTF-8 */
	call(h, 4, "exec.run", "{\"sandbox_id\":\"sbx1\",\"command\":\"cat\",\"stdin\":\"*not base64*\"}");
	CHECK(h_http_next(h) != NULL);
	h_free(h);
}

static void test_start_notifications(void)
{
	harness *h = ready();
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"method\":\"exec.start\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"true\"}}");
	h_http *big = h_http_next(h);
	e2bw_buf bigbody = {0};
	frame(&bigbody, 0, "{\"event\":{\"start\":{\"pid\":76}}}");
	data_frame(&bigbody, "stdout", "x", 1);
	feed_split(h, big->op, &bigbody, 0, 0, 0);
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "\"id\":12345678901234567890,") !=
		NULL); /* any size, exactly as sent */
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "\"request_id\":12345678901234567890,") != NULL);
	e2bw_core_http_fail(h->core, big->op, E2BW_NET_RESET, h->now);
	h_drain(h);
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "\"request_id\":12345678901234567890,") !=
		NULL); /* exec.exit too */
	e2bw_buf_free(&bigbody);
	call(h, 5, "exec.start",
		"{\"sandbox_id\":\"sbx1\",\"command\":\"yes\",\"stdin\":true,\"tag\":\"t1\"}");
	h_http *req = h_http_next(h);
	CHECK(h_header(req, "Connect-Timeout-Ms") == NULL); /* long-lived: no lifetime */
	cJSON *start = cJSON_Parse(req->body + 5);
	CHECK(cJSON_IsTrue(field(start, "stdin")));
	CHECK_STR(field(start, "tag")->valuestring, "t1");
	cJSON_Delete(start);
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":77}}}");
	data_frame(&body, "stdout", "ab", 2);
	data_frame(&body, "stderr", "E", 1);
	data_frame(&body, "stdout", "cde", 3);
	feed_split(h, req->op, &body, 0, 0, 0);
	cJSON *r = h_send(h);
	CHECK_NUM(h_id(r), 5);
	CHECK_NUM(field(h_result(r), "pid")->valuedouble, 77); /* answered at once */
	const char *want[][3] = {{"stdout", "ab", "0"}, {"stderr", "E", "0"}, {"stdout", "cde", "2"}};
	for (int i = 0; i < 3; i++) {
		cJSON *n = h_send(h);
		CHECK_STR(field(n, "method")->valuestring, "exec.output");
		const cJSON *p = field(n, "params");
		CHECK_STR(field(p, "stream")->valuestring, want[i][0]);
		CHECK_STR(field(p, "data")->valuestring, want[i][1]);
		CHECK_NUM(field(p, "offset")->valuedouble, atoi(want[i][2])); /* contiguous per stream */
		CHECK_NUM(field(p, "length")->valuedouble, strlen(want[i][1]));
		CHECK_NUM(field(p, "pid")->valuedouble, 77);
		CHECK_NUM(field(p, "request_id")->valuedouble, 5);
		CHECK_STR(field(p, "sandbox_id")->valuestring, "sbx1");
	}
	/* the stream now waits with an idle deadline: 3 keepalive intervals */
	CHECK(e2bw_core_next_deadline(h->core) == h->now + 6000);
	e2bw_buf_reset(&body);
	frame(&body, 0,
		"{\"event\":{\"end\":{\"exitCode\":-1,\"status\":\"signal: killed\",\"error\":\"signal: killed\"}}}");
	frame(&body, E2BW_ENV_FLAG_END_STREAM, "{}");
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)body.data, body.len, h->now);
	h_drain(h);
	cJSON *exit = h_send(h);
	CHECK_STR(field(exit, "method")->valuestring, "exec.exit");
	const cJSON *p = field(exit, "params");
	CHECK_NUM(field(p, "exit_code")->valuedouble, 137);
	CHECK_STR(field(p, "signal")->valuestring, "SIGKILL");
	CHECK_STR(field(p, "error")->valuestring, "signal: killed");
	CHECK(h_send(h) == NULL); /* exactly one exec.exit, after the last output */
	e2bw_core_http_end(h->core, req->op, h->now);
	h_drain(h);
	CHECK(h_pending(h) == 0);
	e2bw_buf_free(&body);
	h_free(h);
}

static void test_start_liveness_and_shutdown(void)
{
	/* a stream that goes silent ends with exec.exit carrying "unreachable" */
	harness *h = ready();
	call(h, 5, "exec.start",
		"{\"sandbox_id\":\"sbx1\",\"command\":\"sleep 1000\",\"encoding\":\"base64\"}");
	h_http *req = h_http_next(h);
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":8}}}");
	data_frame(&body, "stdout", "\x00\xff", 2);
	feed_split(h, req->op, &body, 0, 0, 0);
	h_send(h);
	cJSON *out = h_send(h);
	CHECK_STR(field(field(out, "params"), "data")->valuestring, "AP8=");
	CHECK_STR(field(field(out, "params"), "encoding")->valuestring, "base64");
	e2bw_core_tick(h->core, h->now + 5999);
	h_drain(h);
	CHECK(h_pending(h) == 0);
	e2bw_core_tick(h->core, h->now + 6000);
	h_drain(h);
	cJSON *exit = h_send(h);
	CHECK_STR(field(exit, "method")->valuestring, "exec.exit");
	const cJSON *failure = field(field(exit, "params"), "failure");
	CHECK_STR(field(field(failure, "data"), "kind")->valuestring, "unreachable");
	CHECK(cJSON_IsNull(field(field(exit, "params"), "exit_code")));
	CHECK(h_cancel_next(h) == req->op);
	CHECK(h_send(h) == NULL);

	/* held by the caller (backpressure): no idle deadline until resumed */
	call(h, 15, "exec.start", "{\"sandbox_id\":\"sbx1\",\"command\":\"sleep 1000\"}");
	req = h_http_next(h);
	e2bw_buf_reset(&body);
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":10}}}");
	feed_split(h, req->op, &body, 0, 0, 0);
	h_send(h);
	e2bw_core_http_hold(h->core, req->op, 1, h->now);
	CHECK(e2bw_core_next_deadline(h->core) == -1);
	e2bw_core_tick(h->core, h->now + 60000);
	h_drain(h);
	CHECK(h_pending(h) == 0);
	e2bw_core_http_hold(h->core, req->op, 0, h->now + 60000);
	CHECK(e2bw_core_next_deadline(h->core) == h->now + 66000);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now);
	h_drain(h);
	h_send(h);

	/* a cut connection after start: exec.exit with the failure */
	call(h, 6, "exec.start", "{\"sandbox_id\":\"sbx1\",\"command\":\"sleep 1000\"}");
	req = h_http_next(h);
	e2bw_buf_reset(&body);
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":9}}}");
	feed_split(h, req->op, &body, 0, 0, 0);
	h_send(h);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now);
	h_drain(h);
	exit = h_send(h);
	CHECK_STR(field(field(field(field(exit, "params"), "failure"), "data"), "kind")->valuestring,
		"unreachable");

	/* shutdown: followed processes get exec.exit (canceled), then the answer */
	call(h, 7, "exec.start", "{\"sandbox_id\":\"sbx1\",\"command\":\"sleep 1000\"}");
	req = h_http_next(h);
	feed_split(h, req->op, &body, 0, 0, 0);
	h_send(h);
	call(h, 8, "exec.run",
		"{\"sandbox_id\":\"sbx1\",\"command\":\"sleep 1000\"}"); /* still waiting for start */
	h_http_next(h);
	call(h, 9, "shutdown", "{}");
	cJSON *a = h_send(h), *b = h_send(h), *c = h_send(h);
	CHECK_NUM(h_id(a), 8);
	CHECK_STR(h_error_kind(a), "canceled");
	CHECK_STR(field(b, "method")->valuestring, "exec.exit");
	CHECK_STR(field(field(field(field(b, "params"), "failure"), "data"), "kind")->valuestring,
		"canceled");
	CHECK_NUM(h_id(c), 9);
	CHECK(h_result(c) != NULL);
	CHECK(e2bw_core_next_deadline(h->core) == -1);
	e2bw_buf_free(&body);
	h_free(h);
}

static void test_unary(void)
{
	harness *h = ready();
	call(h, 1, "process.list", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/process.Process/List");
	CHECK_STR(req->body, "{}");
	CHECK_STR(h_header(req, "Content-Type"), "application/json");
	h_respond(h, req->op, 200, NULL,
		"{\"processes\":[{\"config\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"sleep 9\"],\"envs\":{\"A\":\"1\"},\"cwd\":\"/tmp\"},\"pid\":12,\"tag\":\"t\"},{\"pid\":\"13\"}]}");
	const cJSON *list = field(h_result(h_send(h)), "processes");
	CHECK_NUM(cJSON_GetArraySize(list), 2);
	CHECK_NUM(field(cJSON_GetArrayItem(list, 0), "pid")->valuedouble, 12);
	CHECK_STR(field(cJSON_GetArrayItem(list, 0), "tag")->valuestring, "t");
	CHECK_STR(field(cJSON_GetArrayItem(list, 0), "cwd")->valuestring, "/tmp");
	CHECK_NUM(field(cJSON_GetArrayItem(list, 1), "pid")->valuedouble, 13); /* uint as a string */

	call(h, 2, "process.kill", "{\"sandbox_id\":\"sbx1\",\"pid\":\"12\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/process.Process/SendSignal");
	CHECK_STR(req->body, "{\"process\":{\"pid\":12},\"signal\":\"SIGNAL_SIGKILL\"}");
	h_respond(h, req->op, 200, NULL, "{}");
	CHECK_STR(field(h_result(h_send(h)), "signal")->valuestring, "SIGKILL");
	call(h, 3, "process.kill", "{\"sandbox_id\":\"sbx1\",\"pid\":999}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL,
		"{\"code\":\"not_found\",\"message\":\"process with pid 999 not found\"}");
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK(strstr(h_error_message(r), "process with pid 999 not found") != NULL);
	CHECK(strstr(h_send_text_last(h), "\"sdk_code\":\"E2001\"") != NULL);
	call(h, 4, "process.signal", "{\"sandbox_id\":\"sbx1\",\"pid\":12,\"signal\":15}");
	req = h_http_next(h);
	CHECK_STR(req->body, "{\"process\":{\"pid\":12},\"signal\":\"SIGNAL_SIGTERM\"}");
	h_respond(h, req->op, 200, NULL, "{}");
	CHECK_STR(field(h_result(h_send(h)), "signal")->valuestring, "SIGTERM");

	call(h, 5, "process.stdin",
		"{\"sandbox_id\":\"sbx1\",\"pid\":12,\"data\":\"aGk=\",\"encoding\":\"base64\",\"close\":true}");
	req = h_http_next(h);
	CHECK_STR(req->body, "{\"process\":{\"pid\":12},\"input\":{\"stdin\":\"aGk=\"}}");
	h_respond(h, req->op, 200, NULL, "{}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/process.Process/CloseStdin");
	h_respond(h, req->op, 200, NULL, "{}");
	r = h_send(h);
	CHECK_NUM(field(h_result(r), "written")->valuedouble, 2);
	CHECK(cJSON_IsTrue(field(h_result(r), "closed")));
	call(h, 6, "process.stdin", "{\"sandbox_id\":\"sbx1\",\"pid\":12,\"data\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 500, NULL,
		"{\"code\":\"internal\",\"message\":\"error writing to stdin: stdin not enabled or closed\"}");
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "backend_error");
	CHECK(strstr(h_error_message(r), "stdin not enabled or closed") != NULL);
	call(h, 7, "process.stdin", "{\"sandbox_id\":\"sbx1\",\"pid\":12}");
	CHECK_NUM(h_error_code(h_send(h)), -32602);
	call(h, 8, "process.stdin",
		"{\"sandbox_id\":\"sbx1\",\"pid\":12,\"data\":\"!!\",\"encoding\":\"base64\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32602);

	call(h, 9, "pty.open",
		"{\"sandbox_id\":\"sbx1\",\"cols\":100,\"rows\":30,\"envs\":{\"TERM\":\"dumb\"}}");
	req = h_http_next(h);
	cJSON *start = cJSON_Parse(req->body + 5);
	CHECK_NUM(field(field(field(start, "pty"), "size"), "cols")->valuedouble, 100);
	CHECK_STR(field(field(field(start, "process"), "envs"), "TERM")->valuestring, "dumb");
	CHECK_STR(field(field(field(start, "process"), "envs"), "LANG")->valuestring, "C.UTF-8");
	CHECK_STR(cJSON_GetArrayItem(field(field(start, "process"), "args"), 0)->valuestring, "-i");
	cJSON_Delete(start);
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":55}}}");
	data_frame(&body, "pty", "$ ", 2);
	feed_split(h, req->op, &body, 0, 0, 0);
	CHECK_NUM(field(h_result(h_send(h)), "pid")->valuedouble, 55);
	CHECK_STR(field(field(h_send(h), "params"), "stream")->valuestring, "pty");
	call(h, 10, "pty.input", "{\"sandbox_id\":\"sbx1\",\"pid\":55,\"data\":\"ls\\n\"}");
	req = h_http_next(h);
	CHECK_STR(req->body, "{\"process\":{\"pid\":55},\"input\":{\"pty\":\"bHMK\"}}");
	h_respond(h, req->op, 200, NULL, "{}");
	CHECK(h_result(h_send(h)) != NULL);
	call(h, 11, "pty.resize", "{\"sandbox_id\":\"sbx1\",\"pid\":55,\"cols\":120,\"rows\":40}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/process.Process/Update");
	CHECK_STR(req->body, "{\"process\":{\"pid\":55},\"pty\":{\"size\":{\"cols\":120,\"rows\":40}}}");
	h_respond(h, req->op, 200, NULL, "{}");
	CHECK_NUM(field(h_result(h_send(h)), "cols")->valuedouble, 120);
	call(h, 12, "pty.close", "{\"sandbox_id\":\"sbx1\",\"pid\":55}");
	req = h_http_next(h);
	CHECK_STR(req->body, "{\"process\":{\"pid\":55},\"signal\":\"SIGNAL_SIGKILL\"}");
	h_respond(h, req->op, 200, NULL, "{}");
	h_send(h);

	call(h, 13, "process.attach", "{\"sandbox_id\":\"sbx1\",\"pid\":55}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/process.Process/Connect");
	CHECK_STR(req->body + 5, "{\"process\":{\"pid\":55}}");
	e2bw_buf_reset(&body);
	frame(&body, E2BW_ENV_FLAG_END_STREAM,
		"{\"error\":{\"code\":\"not_found\",\"message\":\"process with pid 55 not found\"}}");
	feed_split(h, req->op, &body, 0, 0, 1);
	r = h_send(h);
	CHECK_NUM(h_id(r), 13);
	CHECK_NUM(h_error_code(r), -32002);
	e2bw_buf_free(&body);
	h_free(h);
}

void suite_process(void)
{
	test_data_checked_against_encoding();
	test_run_request_and_result();
	test_run_every_chunking();
	test_data_event_shapes();
	test_run_failures();
	test_paused_is_not_gone();
	test_run_timeout_and_stdin();
	test_start_notifications();
	test_start_liveness_and_shutdown();
	test_unary();
}
