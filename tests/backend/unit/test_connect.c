/* http/http_connect.c: Connect's framing as envd speaks it — codes and
 * their HTTP statuses, the 5-byte envelope, the end-stream frame, reading a
 * streaming request's one envelope, and Keepalive-Ping-Interval. Requests
 * are real evhttp requests that never saw a connection. */
#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdlib.h>

#include "check.h"
#include "http/http_connect.h"
#include "suites.h"

/* The bytes of buf as a fresh NUL-terminated copy (length in *len). */
static char *take(struct evbuffer *buf, size_t *len)
{
	*len = evbuffer_get_length(buf);
	char *out = calloc(1, *len + 1);
	if (out)
		evbuffer_remove(buf, out, *len);
	return out;
}

static cJSON *read_stream(const void *body, size_t len, struct err *err)
{
	struct evhttp_request *req = evhttp_request_new(NULL, NULL);
	evbuffer_add(evhttp_request_get_input_buffer(req), body, len);
	memset(err, 0, sizeof *err);
	cJSON *msg = connect_read_stream_request(req, err);
	evhttp_request_free(req);
	return msg;
}

void suite_connect(void)
{
	CHECK_STR(connect_code_name(CONNECT_NOT_FOUND), "not_found");
	CHECK_STR(connect_code_name(CONNECT_UNAUTHENTICATED), "unauthenticated");
	CHECK_STR(connect_code_name((enum connect_code)0), "unknown");
	CHECK_STR(connect_code_name((enum connect_code)99), "unknown");
	const struct {
		enum connect_code code;
		int status;
	} statuses[] = {
		{CONNECT_CANCELED, 499},
		{CONNECT_UNKNOWN, 500},
		{CONNECT_INVALID_ARGUMENT, 400},
		{CONNECT_DEADLINE_EXCEEDED, 504},
		{CONNECT_NOT_FOUND, 404},
		{CONNECT_ALREADY_EXISTS, 409},
		{CONNECT_PERMISSION_DENIED, 403},
		{CONNECT_RESOURCE_EXHAUSTED, 429},
		{CONNECT_FAILED_PRECONDITION, 400},
		{CONNECT_ABORTED, 409},
		{CONNECT_OUT_OF_RANGE, 400},
		{CONNECT_UNIMPLEMENTED, 501},
		{CONNECT_INTERNAL, 500},
		{CONNECT_UNAVAILABLE, 503},
		{CONNECT_DATA_LOSS, 500},
		{CONNECT_UNAUTHENTICATED, 401},
	};
	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
		CHECK_NUM(connect_code_http_status(statuses[i].code), statuses[i].status);
	CHECK_NUM(connect_code_http_status((enum connect_code)99), 500);

	/* an envelope: flags, big-endian length, payload */
	struct evbuffer *buf = evbuffer_new();
	CHECK(connect_envelope_add(buf, 0, "{\"a\":1}", 7) == 0);
	size_t len;
	char *bytes = take(buf, &len);
	CHECK(len == 12 && memcmp(bytes, "\0\0\0\0\x07{\"a\":1}", 12) == 0);
	free(bytes);

	/* end-stream: {} on success, {"error":{code,message}} otherwise */
	CHECK(connect_end_stream_add(buf, NULL) == 0);
	bytes = take(buf, &len);
	CHECK(len == 7 && memcmp(bytes, "\x02\0\0\0\x02{}", 7) == 0);
	free(bytes);
	struct err err;
	err_set(&err, CONNECT_NOT_FOUND, "process with pid %d not found", 42);
	CHECK(connect_end_stream_add(buf, &err) == 0);
	bytes = take(buf, &len);
	const char *want =
		"{\"error\":{\"code\":\"not_found\",\"message\":\"process with pid 42 not found\"}}";
	CHECK(len == 5 + strlen(want) && bytes[0] == CONNECT_FLAG_END_STREAM);
	CHECK(((uint8_t)bytes[3] << 8 | (uint8_t)bytes[4]) == (int)strlen(want));
	CHECK_STR(bytes + 5, want);
	free(bytes);

	/* a message that is not UTF-8 leaves as U+FFFD, never as raw bytes */
	cJSON *msg = cJSON_CreateObject();
	cJSON_AddStringToObject(msg, "s", "a\xff");
	CHECK(connect_envelope_add_json(buf, 0, msg) == 0);
	cJSON_Delete(msg);
	bytes = take(buf, &len);
	CHECK_STR(bytes + 5, "{\"s\":\"a\xef\xbf\xbd\"}");
	free(bytes);
	evbuffer_free(buf);

	/* a streaming request is exactly one uncompressed envelope of JSON */
	msg = read_stream("\0\0\0\0\x0b{\"pid\":123}", 16, &err);
	CHECK(msg && cJSON_GetObjectItem(msg, "pid")->valueint == 123);
	cJSON_Delete(msg);
	msg = read_stream("\0\0\0\0\0", 5, &err); /* the empty message */
	CHECK(msg && cJSON_GetArraySize(msg) == 0);
	cJSON_Delete(msg);
	const struct {
		const char *body;
		size_t len;
		const char *message;
	} bad[] = {
		{"\0\0\0", 3, "protocol error: the request has no enveloped message"},
		{"\x01\0\0\0\x02{}", 7,
			"protocol error: received a compressed message without Connect-Content-Encoding"},
		{"\0\0\0\0\x03{}", 7, "protocol error: expected exactly one message envelope of 2 bytes"},
		{"\0\0\0\0\x02{}\0\0\0\0\0", 12,
			"protocol error: expected exactly one message envelope of 7 bytes"},
		{"\0\0\0\0\x02[]", 7, "unmarshal message: the request is not a JSON object"},
		{"\0\0\0\0\x05{} {}", 10, "unmarshal message: the request is not a JSON object"},
		{"\0\0\0\0\x08{\"a\":\"\xff\"}", 13, "unmarshal message: invalid UTF-8 in string"},
		{"\0\0\0\0\x0d{\"a\":\"\\u0000\"}", 18,
			"unmarshal message: strings must not contain NUL (\\u0000)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		msg = read_stream(bad[i].body, bad[i].len, &err);
		CHECK(msg == NULL);
		CHECK(err.status == CONNECT_INVALID_ARGUMENT);
		CHECK_STR(err.msg, bad[i].message);
		cJSON_Delete(msg);
	}

	/* Keepalive-Ping-Interval: seconds (fractions ours), envd's 90 s default, 50 ms floor */
	CHECK_NUM(connect_keepalive_ms(NULL), CONNECT_KEEPALIVE_DEFAULT_MS);
	CHECK_NUM(connect_keepalive_ms(""), 90000);
	CHECK_NUM(connect_keepalive_ms("50"), 50000);
	CHECK_NUM(connect_keepalive_ms("0.2 "), 200);
	CHECK_NUM(connect_keepalive_ms("0.001"), CONNECT_KEEPALIVE_MIN_MS);
	CHECK_NUM(connect_keepalive_ms("1e9"), 86400000);
	CHECK_NUM(connect_keepalive_ms("0"), 90000);
	CHECK_NUM(connect_keepalive_ms("-5"), 90000);
	CHECK_NUM(connect_keepalive_ms("ten"), 90000);
	CHECK_NUM(connect_keepalive_ms("5s"), 90000);
	CHECK_NUM(connect_keepalive_ms("nan"), 90000);
}
