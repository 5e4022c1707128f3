/* Transport failures, deadlines, odd event orders, concurrency. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

static void get(harness *h, int id, const char *extra)
{
	char msg[512];
	snprintf(msg, sizeof msg,
		"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx%d\"%s}}",
		id, id, extra);
	h_submit(h, msg);
}

void suite_transport(void)
{
	harness *h = h_new();
	h_init(h, H_CONFIG);
	CHECK(e2bw_core_next_deadline(h->core) == -1);

	/* refused, reset, dns, tls: unreachable, naming the origin only */
	int failures[] = {E2BW_NET_REFUSED, E2BW_NET_RESET, E2BW_NET_DNS, E2BW_NET_TLS, E2BW_NET_OTHER};
	h_http *req;
	cJSON *r;
	for (int i = 0; i < 5; i++) {
		get(h, 1, "");
		req = h_http_next(h);
		e2bw_core_http_fail(h->core, req->op, failures[i], h->now);
		h_drain(h);
		r = h_send(h);
		CHECK_NUM(h_error_code(r), -32012);
		CHECK_STR(h_error_kind(r), "unreachable");
		CHECK(strstr(h_error_message(r), "http://api.test") != NULL);
		CHECK(h_cancel_next(h) == 0); /* the host already knows it failed */
	}

	/* not HTTP at all: garbage from the backend, not "unreachable" */
	get(h, 1, "");
	req = h_http_next(h);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_PROTOCOL, h->now);
	h_drain(h);
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32017);
	CHECK_STR(h_error_kind(r), "bad_response");

	/* cut mid-body */
	get(h, 2, "");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)"{\"sandbo", 8, h->now);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now);
	h_drain(h);
	r = h_send(h);
	CHECK(strstr(h_error_message(r), "cut while reading") != NULL);

	/* deadline: nothing before it, a typed timeout and a cancel after it */
	get(h, 3, "");
	req = h_http_next(h);
	CHECK(e2bw_core_next_deadline(h->core) == h->now + 10000);
	e2bw_core_tick(h->core, h->now + 9999);
	h_drain(h);
	CHECK(h_pending(h) == 0);
	e2bw_core_tick(h->core, h->now + 10000);
	h_drain(h);
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32013);
	CHECK_STR(h_error_kind(r), "timeout");
	CHECK(strstr(h_error_message(r), "GET /sandboxes/sbx3") != NULL);
	CHECK(h_cancel_next(h) == req->op);
	CHECK(e2bw_core_next_deadline(h->core) == -1);
	h_respond(h, req->op, 200, NULL, "{}"); /* too late: ignored */
	CHECK(h_pending(h) == 0);

	/* per-call request_timeout */
	get(h, 4, ",\"request_timeout\":2");
	req = h_http_next(h);
	CHECK(e2bw_core_next_deadline(h->core) == h->now + 2000);
	h_respond(h, req->op, 404, NULL, "{}");
	h_send(h);

	/* odd event orders from a broken host */
	get(h, 5, "");
	req = h_http_next(h);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)"x", 1, h->now);
	h_drain(h);
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");
	CHECK(h_cancel_next(h) == req->op);
	get(h, 6, "");
	req = h_http_next(h);
	e2bw_core_http_end(h->core, req->op, h->now);
	h_drain(h);
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");
	get(h, 7, "");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 999, "", 0, h->now);
	h_drain(h);
	CHECK_STR(h_error_kind(h_send(h)), "bad_response");
	CHECK(h_cancel_next(h) == req->op);
	e2bw_core_http_head(h->core, 12345, 200, "", 0, h->now); /* unknown op */
	e2bw_core_http_body(h->core, 12345, (const uint8_t *)"x", 1, h->now);
	e2bw_core_http_end(h->core, 12345, h->now);
	e2bw_core_http_fail(h->core, 12345, 1, h->now);
	h_drain(h);
	CHECK(h_pending(h) == 0);

	/* an endless body is cut at the limit */
	get(h, 8, "");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	static uint8_t chunk[1 << 20];
	memset(chunk, ' ', sizeof chunk);
	for (int i = 0; i < 9 && h_pending(h) == 0; i++) {
		e2bw_core_http_body(h->core, req->op, chunk, sizeof chunk, h->now);
		h_drain(h);
	}
	r = h_send(h);
	CHECK_STR(h_error_kind(r), "bad_response");
	CHECK(strstr(h_error_message(r), "exceeds") != NULL);
	CHECK(h_cancel_next(h) == req->op);

	/* concurrent calls are matched by op, answered in any order */
	get(h, 21, "");
	get(h, 22, "");
	h_http *a = h_http_next(h), *b = h_http_next(h);
	CHECK(a->op != b->op);
	h_respond(h, b->op, 200, NULL, "{\"sandboxID\":\"sbx22\",\"state\":\"running\"}");
	h_respond(h, a->op, 200, NULL, "{\"sandboxID\":\"sbx21\",\"state\":\"running\"}");
	r = h_send(h);
	CHECK_NUM(h_id(r), 22);
	CHECK_STR(cJSON_GetObjectItem(h_result(r), "sandbox_id")->valuestring, "sbx22");
	r = h_send(h);
	CHECK_NUM(h_id(r), 21);
	CHECK_STR(cJSON_GetObjectItem(h_result(r), "sandbox_id")->valuestring, "sbx21");
	h_free(h);

	/* freeing a core with calls and actions in flight leaks nothing (ASan) */
	h = h_new();
	h_init(h, H_CONFIG);
	get(h, 1, "");
	e2bw_core_submit(h->core, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sandbox.list\"}", 48, h->now);
	h_free(h);
}

/* Redirects are never followed: the call fails with where it pointed (origin
 * and path only: no credentials, no query), and the request is cancelled. */
void suite_redirects(void)
{
	static const struct {
		int status;
		const char *location, *shown;
	} cases[] = {
		{307, "location: https://user:pw@evil.example:8443/steal?key=sk-x#f\n",
			"https://evil.example:8443/steal"},
		{303, "Location: http://169.254.169.254/latest/meta-data/\n",
			"http://169.254.169.254/latest/meta-data/"},
		{302, "location: /elsewhere?q=1\n", "http://api.test/elsewhere"},
		{301, "location: //other.example/p\n", "http://other.example/p"}, {308, "", NULL},
		{0, "", NULL}, /* a browser's opaque redirect: status 0, no headers */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		harness *h = h_new();
		h_init(h, H_CONFIG);
		h_submit(h,
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"abc\"}}");
		h_http *req = h_http_next(h);
		e2bw_core_http_head(h->core, req->op, cases[i].status, cases[i].location,
			strlen(cases[i].location), h->now);
		h_drain(h);
		cJSON *r = h_send(h);
		CHECK_NUM(h_error_code(r), -32017);
		CHECK_STR(h_error_kind(r), "bad_response");
		CHECK(strstr(h_error_message(r), "redirects are not followed") != NULL);
		const cJSON *data = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data");
		if (cases[i].shown)
			CHECK_STR(cJSON_GetObjectItem(data, "redirect")->valuestring, cases[i].shown);
		else
			CHECK(cJSON_GetObjectItem(data, "redirect") == NULL);
		CHECK(strstr(h_send_text_last(h), "pw") == NULL &&
			strstr(h_send_text_last(h), "key=") == NULL);
		CHECK_NUM(h_cancel_next(h), req->op);
		e2bw_core_http_body(h->core, req->op, (const uint8_t *)"x", 1,
			h->now); /* nothing more for it */
		h_drain(h);
		CHECK(h_pending(h) == 0);
		h_free(h);
	}
}
