/* initialize's config: every field's validation, defaults, no secret echoed. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "suites.h"

static void expect_config_error(const char *config, const char *field)
{
	harness *h = h_new();
	char msg[2048];
	snprintf(msg, sizeof msg,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"config\":%s}}",
		config);
	h_submit(h, msg);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	const cJSON *f =
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"), "field");
	CHECK(cJSON_IsString(f) && !strcmp(f->valuestring, field));
	if (!(cJSON_IsString(f) && !strcmp(f->valuestring, field)))
		fprintf(stderr, "    config %s: %s\n", config, h_send_text_last(h));
	CHECK(strstr(h_send_text_last(h), "hunter2") == NULL);
	/* still not initialized: a later call is refused */
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sandbox.list\"}");
	CHECK_NUM(h_error_code(h_send(h)), -32600);
	h_free(h);
}

static h_http *first_request(harness *h, const char *config)
{
	h_init(h, config);
	h_submit(h,
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"sbx1\"}}");
	return h_http_next(h);
}

void suite_config(void)
{
	expect_config_error("null", "config.api_key");
	expect_config_error("{}", "config.api_key");
	expect_config_error("{\"api_key\":\"\"}", "config.api_key");
	expect_config_error("{\"api_key\":42}", "config.api_key");
	expect_config_error("{\"api_key\":\"hunter2\\r\\nX-Evil: 1\"}", "config.api_key");
	/* a NUL would cut the key ("KEY\u0000junk" authenticating as "KEY"): refused */
	expect_config_error("{\"api_key\":\"hunter2\\u0000junk\"}", "config.api_key");
	expect_config_error("{\"api_key\":\"hunter2\",\"api_url\":\"http://a\\u0000.evil\"}",
		"config.api_url");
	expect_config_error("{\"api_key\":\"hunter2\",\"domain\":\"bad domain/\"}", "config.domain");
	expect_config_error("{\"api_key\":\"hunter2\",\"api_url\":\"ftp://x\"}", "config.api_url");
	expect_config_error("{\"api_key\":\"hunter2\",\"api_url\":\"http://user:hunter2@x\"}",
		"config.api_url");
	expect_config_error("{\"api_key\":\"hunter2\",\"api_url\":\"http://x/?a=1\"}", "config.api_url");
	expect_config_error("{\"api_key\":\"hunter2\",\"api_url\":\"http://\"}", "config.api_url");
	expect_config_error("{\"api_key\":\"hunter2\",\"sandbox_url\":\"localhost:49983\"}",
		"config.sandbox_url");
	expect_config_error("{\"api_key\":\"hunter2\",\"request_timeout\":0}", "config.request_timeout");
	expect_config_error("{\"api_key\":\"hunter2\",\"request_timeout\":-5}", "config.request_timeout");
	expect_config_error("{\"api_key\":\"hunter2\",\"request_timeout\":\"abc\"}",
		"config.request_timeout");
	expect_config_error("{\"api_key\":\"hunter2\",\"request_timeout\":7200}", "config.request_timeout");
	expect_config_error("{\"api_key\":\"hunter2\",\"envd_passthrough\":\"maybe\"}",
		"config.envd_passthrough");

	/* a key that is no declared field is refused, naming the declared field
   * nearest to it: the SDK's apiUrl must not leave api_url at
   * https://api.e2b.app, nor timout let requests take the default 60 s (a
   * host passes only declared fields, so nothing is an extension) */
	static const struct {
		const char *config, *field, *meant;
	} near[] = {
		{"{\"api_key\":\"hunter2\",\"apiUrl\":\"http://127.0.0.1:1\"}", "config.apiUrl", "api_url"},
		{"{\"apiKey\":\"hunter2\"}", "config.apiKey", "api_key"},
		{"{\"api_key\":\"hunter2\",\"sandboxUrl\":\"http://127.0.0.1:1\"}", "config.sandboxUrl",
			"sandbox_url"},
		{"{\"api_key\":\"hunter2\",\"requestTimeoutMs\":1000}", "config.requestTimeoutMs",
			"request_timeout"},
		{"{\"api_key\":\"hunter2\",\"timout\":5}", "config.timout", "request_timeout"},
		{"{\"api_key\":\"hunter2\",\"timeout\":5}", "config.timeout", "request_timeout"},
		{"{\"api_key\":\"hunter2\",\"passthrough\":true}", "config.passthrough", "envd_passthrough"},
		{"{\"api_key\":\"hunter2\",\"keepalive\":\"5\"}", "config.keepalive", "keepalive_interval"},
		{"{\"api_key\":\"hunter2\",\"domian\":\"e2b.dev\"}", "config.domian", "domain"},
		{"{\"api_key\":\"hunter2\",\"request_timout\":5}", "config.request_timout",
			"request_timeout"},
		{"{\"api_key\":\"hunter2\",\"ENVD_PASSTHROUGH\":true}", "config.ENVD_PASSTHROUGH",
			"envd_passthrough"},
	};
	for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
		expect_config_error(near[i].config, near[i].field);
		harness *h = h_new();
		char msg[512];
		snprintf(msg, sizeof msg,
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"config\":%s}}",
			near[i].config);
		h_submit(h, msg);
		cJSON *r = h_send(h);
		CHECK_STR(cJSON_GetStringValue(
				  cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"),
							      "data"),
					  "did_you_mean")),
			near[i].meant);
		char want[64];
		snprintf(want, sizeof want, "did you mean '%s'?", near[i].meant);
		CHECK(strstr(h_error_message(r), want) != NULL);
		h_free(h);
	}

	/* a key near no field at all: refused all the same, listing the fields */
	{
		expect_config_error("{\"api_key\":\"hunter2\",\"colour\":\"blue\"}", "config.colour");
		harness *h = h_new();
		h_submit(h,
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"config\":{\"api_key\":\"hunter2\",\"colour\":\"blue\"}}}");
		cJSON *r = h_send(h);
		CHECK(strstr(h_error_message(r),
			      "'colour' is not a config field (api_key, domain, api_url, sandbox_url, request_timeout, "
			      "keepalive_interval, envd_passthrough): the nearest is '") != NULL);
		CHECK(cJSON_IsString(
			cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "data"),
				"did_you_mean")));
		h_free(h);
	}

	/* a missing key says how to set it on this transport: the loader tells
   * the core (it reads no environment); by default, initialize's config */
	static const char *const hints[] = {NULL, "set it with 'tool config set key'"};
	for (int i = 0; i < 2; i++) {
		for (int with_config = 0; with_config < 2; with_config++) {
			harness *h = h_new();
			if (hints[i])
				e2bw_core_set_key_hint(h->core, hints[i], strlen(hints[i]));
			h_submit(h,
				with_config
					? "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"config\":{\"domain\":\"e2b.dev\"}}}"
					: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
			cJSON *r = h_send(h);
			char want[128];
			snprintf(want, sizeof want, "'api_key' is required: %s",
				hints[i] ? hints[i] : "give it in initialize's params.config");
			CHECK(strstr(h_error_message(r), want) != NULL);
			CHECK(strstr(h_error_message(r), "ABX_") == NULL);
			h_free(h);
		}
	}

	harness *h = h_new();
	h_http *req = first_request(h, "{\"api_key\":\"k-123456\",\"domain\":\"example.com\"}");
	CHECK_STR(req->url, "https://api.example.com/sandboxes/sbx1");
	CHECK_STR(h_header(req, "X-API-Key"), "k-123456");
	h_free(h);

	h = h_new();
	req = first_request(h, "{\"api_key\":\"k-123456\"}");
	CHECK_STR(req->url, "https://api.e2b.app/sandboxes/sbx1");
	CHECK(e2bw_core_next_deadline(h->core) == h->now + 60000); /* default request_timeout */
	h_free(h);

	h = h_new();
	req = first_request(h,
		"{\"api_key\":\"k-123456\",\"api_url\":\"http://127.0.0.1:8080/base//\",\"request_timeout\":\"2.5\",\"domain\":\"\"}");
	CHECK_STR(req->url, "http://127.0.0.1:8080/base/sandboxes/sbx1");
	CHECK(e2bw_core_next_deadline(h->core) == h->now + 2500);
	h_free(h);

	/* passthrough: records carry envd_url and the envd token, for hosts that
   * talk to envd themselves */
	h = h_new();
	req = first_request(h,
		"{\"api_key\":\"k-123456\",\"api_url\":\"http://a\",\"sandbox_url\":\"http://127.0.0.1:9/\",\"envd_passthrough\":true}");
	h_respond(h, req->op, 200, NULL,
		"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"running\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"tok-abcdef\"}");
	const cJSON *rec = h_result(h_send(h));
	CHECK_STR(cJSON_GetObjectItem(rec, "envd_url")->valuestring, "http://127.0.0.1:9");
	CHECK_STR(cJSON_GetObjectItem(rec, "envd_access_token")->valuestring, "tok-abcdef");
	h_free(h);

	h = h_new();
	req = first_request(h,
		"{\"api_key\":\"k-123456\",\"api_url\":\"http://a\",\"envd_passthrough\":\"true\"}");
	h_respond(h, req->op, 200, NULL,
		"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"domain\":\"eu.e2b.dev\"}");
	rec = h_result(h_send(h));
	CHECK_STR(cJSON_GetObjectItem(rec, "envd_url")->valuestring, "https://49983-sbx1.eu.e2b.dev");
	CHECK(cJSON_GetObjectItem(rec, "envd_access_token") == NULL);
	h_free(h);

	/* the control plane's domain wins over sandbox_url: a per-sandbox host
   * needs no routing header */
	h = h_new();
	req = first_request(h,
		"{\"api_key\":\"k-123456\",\"api_url\":\"http://a\",\"sandbox_url\":\"http://127.0.0.1:9\",\"envd_passthrough\":\"true\"}");
	h_respond(h, req->op, 200, NULL,
		"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"domain\":\"eu.e2b.dev\"}");
	rec = h_result(h_send(h));
	CHECK_STR(cJSON_GetObjectItem(rec, "envd_url")->valuestring, "https://49983-sbx1.eu.e2b.dev");
	h_free(h);

	/* the backend's own per-sandbox URL (the local backend's envdUrl) wins
   * over domain and sandbox_url */
	h = h_new();
	req = first_request(h,
		"{\"api_key\":\"k-123456\",\"api_url\":\"http://a\",\"sandbox_url\":\"http://127.0.0.1:9\",\"envd_passthrough\":\"true\"}");
	h_respond(h, req->op, 200, NULL,
		"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"domain\":null,\"envdUrl\":\"http://127.0.0.1:4321\"}");
	rec = h_result(h_send(h));
	CHECK_STR(cJSON_GetObjectItem(rec, "envd_url")->valuestring, "http://127.0.0.1:4321");
	h_free(h);

	/* without passthrough the token never leaves the core */
	h = h_new();
	req = first_request(h, H_CONFIG);
	h_respond(h, req->op, 200, NULL,
		"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"envdAccessToken\":\"tok-abcdef\"}");
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "tok-abcdef") == NULL);
	CHECK(strstr(h_send_text_last(h), "envd_url") == NULL);
	h_free(h);
}
