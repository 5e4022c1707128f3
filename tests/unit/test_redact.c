/* Credentials never leave the core: not whole, not in pieces of 8 or more
 * characters, in no kind of message (answers, errors, notifications). */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "envelope.h"
#include "harness.h"
#include "redact.h"
#include "suites.h"

#define KEY "e2b_0123456789abcdef0123456789abcdef01234567" /* 44 characters, like E2B's */
#define TOKEN "tok-ENVD-SECRET-abcdefgh"
#define CONFIG \
	"{\"api_key\":\"" KEY "\",\"api_url\":\"http://api.test\",\"sandbox_url\":\"http://envd.test\"%s}"
#define DETAIL \
	"{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"envdAccessToken\":\"" TOKEN \
	"\",\"metadata\":{\"envd_access_token\":\"" KEY "\"}}"

/* 1 when any 8 consecutive characters of secret appear in text. */
static int leaks(const char *text, const char *secret)
{
	size_t n = strlen(secret);
	for (size_t i = 0; i + 8 <= n; i++) {
		char run[9];
		memcpy(run, secret + i, 8);
		run[8] = 0;
		if (strstr(text, run))
			return 1;
	}
	return 0;
}

static int any_leak(harness *h)
{
	for (int i = 0; i < h->nsend; i++)
		if (leaks(h->send_text[i], KEY) || leaks(h->send_text[i], TOKEN))
			return 1;
	return 0;
}

static harness *ready(const char *extra)
{
	char config[512];
	snprintf(config, sizeof config, CONFIG, extra);
	harness *h = h_new();
	h_init(h, config);
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}}");
	h_respond(h, h_http_next(h)->op, 200, NULL, DETAIL);
	return h;
}

static void frame(e2bw_buf *b, int flags, const char *json)
{
	e2bw_env_encode(b, (uint8_t)flags, json, strlen(json));
}

/* envd ends a followed process's stream with an error quoting the token:
 * exec.exit.error and exec.exit.failure both show it redacted. */
static void test_exit_error_quoting_the_token(void)
{
	harness *h = ready("");
	cJSON *got = h_send(h);
	CHECK(h_result(got) != NULL);
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"exec.start\",\"params\":{\"sandbox_id\":\"sbx1\",\"command\":\"yes\"}}");
	h_http *req = h_http_next(h);
	e2bw_buf body = {0};
	frame(&body, 0, "{\"event\":{\"start\":{\"pid\":7}}}");
	frame(&body, E2BW_ENV_FLAG_END_STREAM,
		"{\"error\":{\"code\":\"unauthenticated\",\"message\":\"token " TOKEN " expired\"}}");
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)body.data, body.len, h->now);
	e2bw_core_http_end(h->core, req->op, h->now);
	h_drain(h);
	CHECK(h_result(h_send(h)) != NULL); /* exec.start's answer */
	cJSON *exit = h_send(h);
	const cJSON *params = cJSON_GetObjectItem(exit, "params");
	CHECK_STR(cJSON_GetObjectItem(exit, "method")->valuestring, "exec.exit");
	CHECK_STR(cJSON_GetObjectItem(params, "error")->valuestring,
		"envd process.Process/Start failed: [unauthenticated] token *** expired");
	CHECK(!any_leak(h));
	e2bw_buf_free(&body);
	h_free(h);
}

/* A backend message longer than the limit, with the key across the cut:
 * no piece of the key survives (it used to leak 29 of its 44 characters). */
static void test_secret_across_the_cut(void)
{
	for (int at = 250; at < 340; at++) {
		harness *h = ready("");
		h_send(h);
		char msg[1024];
		int n = snprintf(msg, sizeof msg, "{\"code\":500,\"message\":\"");
		memset(msg + n, 'x', (size_t)at);
		snprintf(msg + n + at, sizeof msg - (size_t)(n + at), "%s and more text\"}", KEY);
		h_submit(h,
			"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sandbox.kill\",\"params\":{\"sandbox_id\":\"sbx1\"}}");
		h_respond(h, h_http_next(h)->op, 500, NULL, msg);
		cJSON *r = h_send(h);
		CHECK_NUM(h_error_code(r), -32000);
		CHECK(!leaks(h_send_text_last(h), KEY));
		h_free(h);
	}
}

/* Every kind of message is scrubbed, results included; envd_passthrough
 * hands out the sandbox's own token on purpose, and nothing else. */
static void test_results_and_passthrough(void)
{
	harness *h = ready("");
	cJSON *r = h_send(h);
	const cJSON *meta = cJSON_GetObjectItem(h_result(r), "metadata");
	CHECK_STR(cJSON_GetObjectItem(meta, "envd_access_token")->valuestring, "***");
	CHECK(!any_leak(h));
	h_free(h);

	h = ready(",\"envd_passthrough\":true");
	r = h_send(h);
	CHECK_STR(cJSON_GetObjectItem(h_result(r), "envd_access_token")->valuestring, TOKEN);
	meta = cJSON_GetObjectItem(h_result(r), "metadata");
	CHECK_STR(cJSON_GetObjectItem(meta, "envd_access_token")->valuestring,
		"***"); /* the key stays secret */
	h_free(h);
}

/* The scrubber itself: runs of 8+ anywhere in a string, escapes kept whole,
 * JSON still valid, nothing outside strings touched. */
static void test_scrubber(void)
{
	e2bw_secrets s = {0};
	CHECK(e2bw_secrets_add(&s, "abc", 0) == 0); /* too short: ignored */
	CHECK(e2bw_secrets_add(&s, "pa\"ss\\word-12345", 0) == 0);
	CHECK(e2bw_secrets_add(&s, "short7x", 1) == 0);
	CHECK_NUM(s.n, 2);
	const char *in =
		"{\"a\":\"x pa\\\"ss\\\\word-12345 y\",\"b\":\"word-123\",\"c\":12345678,\"d\":\"short7x!\",\"e\":\"abc\"}";
	size_t len = strlen(in);
	char *text = e2bw_redact_json(&s, strdup(in), &len, 0);
	CHECK_STR(text, "{\"a\":\"x *** y\",\"b\":\"***\",\"c\":12345678,\"d\":\"***!\",\"e\":\"abc\"}");
	CHECK_NUM(len, strlen(text));
	cJSON *parsed = cJSON_Parse(text);
	CHECK(parsed != NULL);
	cJSON_Delete(parsed);
	free(text);
	/* a message without secrets comes back as it was, without a copy */
	char *plain = strdup("{\"a\":\"nothing here\"}");
	len = strlen(plain);
	CHECK(e2bw_redact_json(&s, plain, &len, 0) == plain);
	free(plain);
	/* a stray UTF-8 lead byte before an escaped quote must not put the string
   * state out of step (the fuzzer found a run of the key passing that way) */
	const char *stray = "{\"m\":\"un\x9c\xe0,\\\"key word-12345 age\\\"\"}";
	len = strlen(stray);
	text = e2bw_redact_json(&s, strdup(stray), &len, 0);
	CHECK(strstr(text, "word-123") == NULL);
	free(text);
	char *raw = e2bw_redact_raw(&s, "pa\"ss\\word-1234");
	CHECK_STR(raw, "***");
	free(raw);
	/* a traffic token is kept only as the value of its own header member, with
   * or without allow_tokens; an envd token never there */
	CHECK(e2bw_secrets_add(&s, "5eed0123456789abcdef7", E2BW_SECRET_TRAFFIC_TOKEN) == 0);
	const char *ports =
		"{\"e2b-traffic-access-token\":\"5eed0123456789abcdef7\",\"envd_access_token\":\"5eed0123456789abcdef7\","
		"\"x\":\"5eed0123456789abcdef7\",\"e2b-traffic-access-token \":\"short7x\"}";
	for (int allow = 0; allow < 2; allow++) {
		len = strlen(ports);
		text = e2bw_redact_json(&s, strdup(ports), &len, allow);
		CHECK_STR(text,
			"{\"e2b-traffic-access-token\":\"5eed0123456789abcdef7\",\"envd_access_token\":\"***\","
			"\"x\":\"***\",\"e2b-traffic-access-token \":\"***\"}");
		free(text);
	}
	e2bw_secrets_free(&s);
}

/* Detection finds a run of 8 of a secret wherever it starts, however long
 * the text (the 16-byte blocks, the window across them, the tail), and
 * nothing else: against a plain search, on random text over the secrets'
 * own characters (so near misses are everywhere) with pieces planted. */
static void test_detection_everywhere(void)
{
	static const char *secrets[] = {KEY, TOKEN, "\xc3\xa9t\xc3\xa9-non-ascii-secret"};
	for (int wide = 0; wide < 2; wide++) {
		e2bw_secrets s = {0};
		for (int k = 0; k < 2 + wide; k++)
			CHECK(e2bw_secrets_add(&s, secrets[k], k > 0) == 0);
		unsigned seed = 12345;
		char text[200];
		for (int round = 0; round < 20000; round++) {
			size_t len = (size_t)(round % 190) + 1;
			for (size_t i = 0; i < len; i++) {
				seed = seed * 1103515245u + 12345u;
				text[i] = "0123456789abcdefe2b_tok-ENVDSECRT"[(seed >> 16) % 33];
			}
			seed = seed * 1103515245u + 12345u;
			if (round % 3 == 0 &&
				len >= 8) { /* plant a piece of 7 to 12 characters of a secret */
				const char *sec = secrets[(seed >> 8) % (unsigned)(2 + wide)];
				size_t piece = 7 + (seed >> 12) % 6, at = (seed >> 4) % len;
				size_t from = (seed >> 20) % (strlen(sec) - piece);
				if (at + piece > len)
					at = len - (piece < len ? piece : len);
				memcpy(text + at, sec + from, piece < len ? piece : len);
			}
			text[len] = '\0';
			int want = 0;
			for (int k = 0; k < 2 + wide; k++)
				want |= leaks(text, secrets[k]);
			size_t n = len;
			char *copy = strdup(text), *out = e2bw_redact_bytes(&s, copy, &n);
			CHECK((out != copy) == want);
			if (out != copy && !want)
				printf("    false hit: %s\n", text);
			if (out == copy && want)
				printf("    missed: %s\n", text);
			CHECK(!leaks(out, secrets[0]) && !leaks(out, secrets[1]));
			free(out);
		}
		e2bw_secrets_free(&s);
	}
}

void suite_redact(void)
{
	test_detection_everywhere();
	test_exit_error_quoting_the_token();
	test_secret_across_the_cut();
	test_results_and_passthrough();
	test_scrubber();
}
