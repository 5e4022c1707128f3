/* files.* and ports.url against hand-played envd answers, plus the codecs
 * they use: SHA-256 and envd's v1_ signature (vectors computed with node's
 * crypto), the multipart encoder, EntryInfo mapping, filesystem error
 * mapping, glob matching, Range handling. Bodies are fed at every chunking. */
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "check.h"
#include "envelope.h"
#include "files.h"
#include "files_entry.h"
#include "files_url.h"
#include "harness.h"
#include "multipart.h"
#include "sha256.h"
#include "suites.h"

#define CONFIG \
	"{\"api_key\":\"sk-test-SECRET-1234\",\"api_url\":\"http://api.test\",\"sandbox_url\":\"http://envd.test\",\"request_timeout\":10,\"keepalive_interval\":2}"
#define CONFIG_E2B "{\"api_key\":\"sk-test-SECRET-1234\",\"domain\":\"e2b.test\",\"request_timeout\":10}"
#define DETAIL \
	"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"running\",\"envdVersion\":\"0.6.13\",\"envdAccessToken\":\"tok-ENVD-SECRET\"}"
#define DETAIL_OLD \
	"{\"sandboxID\":\"sbx1\",\"templateID\":\"base\",\"state\":\"running\",\"envdVersion\":\"0.5.6\",\"envdAccessToken\":\"tok-ENVD-SECRET\"}"
#define ENTRY \
	"{\"name\":\"a b.txt\",\"type\":\"FILE_TYPE_FILE\",\"path\":\"/home/user/a b.txt\",\"size\":\"5\",\"mode\":416,\"permissions\":\"-rw-r-----\",\"owner\":\"agent\",\"group\":\"agent\",\"modifiedTime\":\"2026-01-02T03:04:05.123Z\"}"

static const cJSON *field(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}
static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(field(o, k));
}
static const char *data_str(const cJSON *msg, const char *k)
{
	return str(field(field(msg, "error"), "data"), k);
}

static void call(harness *h, int id, const char *method, const char *params)
{
	char msg[8192];
	snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":%s}", id,
		method, params);
	h_submit(h, msg);
}

static harness *ready_with(const char *config, const char *detail)
{
	harness *h = h_new();
	h_init(h, config);
	call(h, 90, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, detail);
	h_send(h);
	return h;
}
static harness *ready(void)
{
	return ready_with(CONFIG, DETAIL);
}

/* --- codecs ------------------------------------------------------------------ */

static void hex(const uint8_t *d, char out[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void test_sha256(void)
{
	uint8_t d[32];
	char x[65];
	e2bw_sha256 s;
	e2bw_sha256_init(&s);
	e2bw_sha256_final(&s, d);
	hex(d, x);
	CHECK_STR(x, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* "abc" split at every point gives the same digest */
	for (int cut = 0; cut <= 3; cut++) {
		e2bw_sha256_init(&s);
		e2bw_sha256_update(&s, "abc", (size_t)cut);
		e2bw_sha256_update(&s, "abc" + cut, (size_t)(3 - cut));
		e2bw_sha256_final(&s, d);
		hex(d, x);
		CHECK_STR(x, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	}
	/* a million 'a' in uneven pieces: many blocks, padding across a block */
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	e2bw_sha256_init(&s);
	for (size_t pos = 0, step = 1; pos < 1000000; pos += step, step = step * 3 % 997 + 1)
		e2bw_sha256_update(&s, a + pos, pos + step > 1000000 ? 1000000 - pos : step);
	e2bw_sha256_final(&s, d);
	hex(d, x);
	CHECK_STR(x, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void test_signature(void)
{
	e2bw_buf b = {0};
	/* vectors from node: "v1_" + sha256(...).digest("base64") without "=" */
	e2bw_files_signature(&b, "/home/user/a b.txt", "read", "user", "tok-ENVD-SECRET", 1767229200);
	CHECK_STR(b.data, "v1_8naPndJmDHAM4cvAQvKJ9yveHiE1qdKBzOoG3s5yFcs");
	e2bw_buf_reset(&b);
	e2bw_files_signature(&b, "/tmp/\xc3\xbc.bin", "write", "root", "tok-ENVD-SECRET", -1);
	CHECK_STR(b.data, "v1_UWrJK8we8hN8k3xLLr+IXNlPK2g2hZmSu+AuGaDzGMY");
	e2bw_buf_free(&b);
	char when[32];
	e2bw_rfc3339(when, 1767229200);
	CHECK_STR(when, "2026-01-01T01:00:00Z");
	e2bw_rfc3339(when, 951782400); /* a leap day */
	CHECK_STR(when, "2000-02-29T00:00:00Z");
	e2bw_rfc3339(when, 0);
	CHECK_STR(when, "1970-01-01T00:00:00Z");
}

static void test_glob(void)
{
	CHECK(e2bw_glob_match("*.txt", "a b.txt"));
	CHECK(!e2bw_glob_match("*.txt", "a.txt.bak"));
	CHECK(e2bw_glob_match("a?c", "abc"));
	CHECK(!e2bw_glob_match("a?c", "ac"));
	CHECK(e2bw_glob_match("[a-c]*", "bee"));
	CHECK(!e2bw_glob_match("[!a-c]*", "bee"));
	CHECK(e2bw_glob_match("*", ""));
	CHECK(e2bw_glob_match("*a*b*", "xxaYYbzz"));
	CHECK(!e2bw_glob_match("*a*b*", "xxbYYazz"));
	CHECK(e2bw_glob_match("\\*", "*"));
	CHECK(!e2bw_glob_match("\\*", "x"));
	CHECK(e2bw_glob_match("[", "["));
	CHECK(e2bw_glob_match("\xc3\xbc*",
		"\xc3\xbc"
		"ber"));
}

static void test_multipart(void)
{
	e2bw_buf b = {0};
	CHECK(e2bw_multipart_file(&b, "BND", "/tmp/a \"q\".txt", (const uint8_t *)"hi\r\n--x", 7) == 0);
	const char *want =
		"--BND\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/tmp/a %22q%22.txt\"\r\n"
		"Content-Type: application/octet-stream\r\n\r\nhi\r\n--x\r\n--BND--\r\n";
	CHECK_NUM(b.len, strlen(want));
	CHECK(b.len == strlen(want) && memcmp(b.data, want, b.len) == 0);
	e2bw_buf_free(&b);
}

static void test_entry_mapping(void)
{
	cJSON *info = cJSON_Parse(ENTRY);
	cJSON *e = e2bw_entry_from_envd(info);
	CHECK_STR(str(e, "name"), "a b.txt");
	CHECK_STR(str(e, "path"), "/home/user/a b.txt");
	CHECK_STR(str(e, "type"), "file");
	CHECK_NUM(field(e, "size")->valuedouble, 5);
	CHECK_NUM(field(e, "mode")->valuedouble, 0640);
	CHECK_STR(str(e, "permissions"), "-rw-r-----");
	CHECK_STR(str(e, "owner"), "agent");
	CHECK_STR(str(e, "group"), "agent");
	CHECK_STR(str(e, "modified_at"), "2026-01-02T03:04:05.123Z");
	CHECK(field(e, "symlink_target") == NULL);
	cJSON_Delete(e);
	cJSON_Delete(info);
	/* snake_case names, numeric enums, numbers for int64, a symlink */
	info = cJSON_Parse(
		"{\"name\":\"l\",\"path\":\"/l\",\"type\":2,\"size\":4096,\"mode\":1023,\"symlink_target\":\"/\",\"modified_time\":\"x\"}");
	e = e2bw_entry_from_envd(info);
	CHECK_STR(str(e, "type"), "dir");
	CHECK_NUM(field(e, "size")->valuedouble, 4096);
	CHECK_NUM(field(e, "mode")->valuedouble, 01777);
	CHECK_STR(str(e, "symlink_target"), "/");
	CHECK_STR(str(e, "modified_at"), "x");
	cJSON_Delete(e);
	cJSON_Delete(info);
	info = cJSON_Parse("{\"name\":\"b\",\"path\":\"/b\",\"type\":\"FILE_TYPE_UNSPECIFIED\"}");
	e = e2bw_entry_from_envd(info);
	CHECK_STR(str(e, "type"), "other");
	cJSON_Delete(e);
	cJSON_Delete(info);
	info = cJSON_Parse("{\"path\":\"/b\"}"); /* no name: not an entry */
	CHECK(e2bw_entry_from_envd(info) == NULL);
	cJSON_Delete(info);
}

/* --- bad input ------------------------------------------------------------------- */

static void expect_invalid(harness *h, const char *method, const char *params, const char *field_name)
{
	call(h, 7, method, params);
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	if (field_name)
		CHECK_STR(data_str(r, "field"), field_name);
	CHECK(h->nhttp == h->http_pos); /* refused before any request */
}

static void test_bad_input(void)
{
	harness *h = ready();
	expect_invalid(h, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"rel/a.txt\"}", "path");
	expect_invalid(h, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"\"}", "path");
	expect_invalid(h, "files.read", "{\"sandbox_id\":\"sbx1\"}", "path");
	expect_invalid(h, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"offset\":-1}", "offset");
	expect_invalid(h, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"length\":1.5}", "length");
	expect_invalid(h, "files.stat", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\\u0000/etc/passwd\"}", NULL);
	expect_invalid(h, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\\u0000y\"}", NULL);
	expect_invalid(h, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\",\"mode\":4096}", "mode");
	expect_invalid(h, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\",\"owner\":\"a:b\"}", "owner");
	expect_invalid(h, "files.move", "{\"sandbox_id\":\"sbx1\",\"source\":\"/a\",\"destination\":\"b\"}",
		"destination");
	expect_invalid(h, "files.url", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"operation\":\"delete\"}",
		"operation");
	expect_invalid(h, "ports.url", "{\"sandbox_id\":\"sbx1\",\"port\":70000}", "port");
	expect_invalid(h, "files.search",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"pattern\":\"*\",\"depth\":65}", "depth");
	/* an escaped backslash, then a NUL escape: three backslashes */
	expect_invalid(h, "files.stat", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\\\\\\u0000\"}", NULL);
	/* an escaped backslash before u0000 is text, not NUL */
	call(h, 8, "files.stat", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\\\\u0000\"}");
	h_http *req = h_http_next(h);
	CHECK(req != NULL);
	/* invalid base64 content: refused before the upload */
	call(h, 9, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"@@@\",\"encoding\":\"base64\"}");
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK_STR(data_str(r, "field"), "content");
	h_free(h);
}

/* --- files.read ---------------------------------------------------------------------- */

/* Feeds a response split at s and t (head first). */
static void respond_split(harness *h, uint32_t op, int status, const char *headers, const uint8_t *body,
	size_t len, size_t s, size_t t)
{
	e2bw_core_http_head(h->core, op, status, headers, strlen(headers), h->now);
	size_t cuts[3] = {s < len ? s : len, t < len ? t : len, len};
	size_t pos = 0;
	for (int i = 0; i < 3; i++) {
		if (cuts[i] > pos)
			e2bw_core_http_body(h->core, op, body + pos, cuts[i] - pos, h->now);
		if (cuts[i] > pos)
			pos = cuts[i];
	}
	e2bw_core_http_end(h->core, op, h->now);
	h_drain(h);
}

static void test_read_request(void)
{
	harness *h = ready();
	call(h, 1, "files.read",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/a b+\xc3\xbc.txt\",\"offset\":10,\"length\":5,\"user\":\"root\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "GET");
	CHECK_STR(req->url, "http://envd.test/files?path=%2Fhome%2Fuser%2Fa%20b%2B%C3%BC.txt&username=root");
	CHECK_STR(h_header(req, "Range"), "bytes=10-14");
	CHECK_STR(h_header(req, "X-Access-Token"), "tok-ENVD-SECRET");
	CHECK_STR(h_header(req, "E2b-Sandbox-Id"), "sbx1");
	CHECK_STR(h_header(req, "E2b-Sandbox-Port"), "49983");
	CHECK_STR(h_header(req, "Accept-Encoding"), "identity");
	CHECK(h_header(req, "X-API-Key") == NULL);
	respond_split(h, req->op, 206, "content-length: 5\ncontent-range: bytes 10-14/100\n",
		(const uint8_t *)"hello", 5, 2, 3);
	cJSON *r = h_send(h);
	const cJSON *res = h_result(r);
	CHECK_STR(str(res, "content"), "hello");
	CHECK_STR(str(res, "encoding"), "utf8");
	CHECK_NUM(field(res, "size")->valuedouble, 5);
	CHECK_NUM(field(res, "offset")->valuedouble, 10);
	CHECK_NUM(field(res, "total_size")->valuedouble, 100);
	CHECK_STR(str(res, "path"), "/home/user/a b+\xc3\xbc.txt");
	CHECK(h_pending(h) == 0);
	/* no user: none is sent, envd acts as the sandbox's default user (as the
   * E2B SDK does); no range header without offset/length */
	call(h, 2, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/x\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/files?path=%2Fx");
	CHECK(h_header(req, "Range") == NULL);
	h_free(h);
}

/* All 256 byte values, base64, at every pair of split points. */
static void test_read_binary_every_chunking(void)
{
	uint8_t bytes[256];
	for (int i = 0; i < 256; i++)
		bytes[i] = (uint8_t)i;
	e2bw_buf want = {0};
	e2bw_base64_encode(&want, bytes, sizeof bytes);
	for (size_t s = 0; s <= 256; s += 7) {
		for (size_t t = s; t <= 256; t += 13) {
			harness *h = ready();
			call(h, 1, "files.read",
				"{\"sandbox_id\":\"sbx1\",\"path\":\"/bin.dat\",\"encoding\":\"base64\"}");
			h_http *req = h_http_next(h);
			respond_split(h, req->op, 200, "content-length: 256\n", bytes, 256, s, t);
			const cJSON *res = h_result(h_send(h));
			CHECK_STR(str(res, "content"), want.data);
			CHECK_NUM(field(res, "size")->valuedouble, 256);
			CHECK_NUM(field(res, "total_size")->valuedouble, 256);
			h_free(h);
		}
	}
	e2bw_buf_free(&want);
}

/* UTF-8 text with a character cut by every chunking decodes the same. */
static void test_read_text_every_chunking(void)
{
	const char *text = "a \xc3\xbc \xe2\x82\xac \xf0\x9f\x98\x80 \"q\"\n\ttab";
	size_t n = strlen(text);
	for (size_t s = 0; s <= n; s++) {
		for (size_t t = s; t <= n; t++) {
			harness *h = ready();
			call(h, 1, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/t.txt\"}");
			h_http *req = h_http_next(h);
			respond_split(h, req->op, 200, "", (const uint8_t *)text, n, s, t);
			const cJSON *res = h_result(h_send(h));
			CHECK_STR(str(res, "content"), text);
			h_free(h);
		}
	}
}

static void test_read_failures(void)
{
	harness *h = ready();
	/* missing file: -32002 with the documented sdk_code */
	call(h, 1, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/nope\"}");
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 404, "content-type: application/json\n",
		"{\"code\":404,\"message\":\"path '/nope' does not exist\"}\n");
	cJSON *r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(data_str(r, "kind"), "not_found");
	CHECK_STR(data_str(r, "sdk_code"), "E2001");
	CHECK_STR(data_str(r, "path"), "/nope");
	/* a directory */
	call(h, 2, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/home\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 400, NULL, "{\"code\":400,\"message\":\"path '/home' is a directory\"}\n");
	CHECK_STR(data_str(h_send(h), "kind"), "is_directory");
	/* a body cut short of its Content-Length is never content */
	call(h, 3, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, "content-length: 10\n", "short");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32017);
	CHECK(strstr(h_error_message(r), "5 of 10") != NULL);
	/* a connection cut mid-body */
	call(h, 4, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\"}");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)"abc", 3, h->now);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now);
	h_drain(h);
	CHECK_NUM(h_error_code(h_send(h)), -32012);
	/* too large for one message: refused from the head, naming the limit */
	call(h, 5, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/big\",\"encoding\":\"base64\"}");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "content-length: 16777216\n", 25, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)"abc", 3, h->now);
	h_drain(h);
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK_STR(data_str(r, "kind"), "too_large");
	CHECK_NUM(field(field(field(r, "error"), "data"), "limit")->valuedouble, E2BW_FILES_MAX_READ);
	CHECK(strstr(h_error_message(r), "offset/length") != NULL &&
		strstr(h_error_message(r), "files.url") != NULL);
	CHECK(h_cancel_next(h) == req->op); /* the rest is not read */
	/* a length over the limit is refused before asking */
	call(h, 6, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/big\",\"length\":16777216}");
	CHECK_STR(data_str(h_send(h), "kind"), "too_large");
	/* not UTF-8 in text mode: told to use base64, not given U+FFFD */
	call(h, 7, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/bin\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "ok\xff");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK_STR(data_str(r, "field"), "encoding");
	CHECK(h_cancel_next(h) == req->op); /* given up mid-body */
	/* envd ignoring Range: the core skips to offset itself */
	call(h, 8, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"offset\":2,\"length\":3}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, "content-length: 8\n", "abcdefgh");
	r = h_send(h);
	CHECK_STR(str(h_result(r), "content"), "cde");
	CHECK_NUM(field(h_result(r), "total_size")->valuedouble, 8);
	/* offset past the end: no bytes, not an error */
	call(h, 9, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"offset\":100}");
	req = h_http_next(h);
	h_respond(h, req->op, 416, "content-range: bytes */8\n", NULL);
	r = h_send(h);
	CHECK_STR(str(h_result(r), "content"), "");
	CHECK_NUM(field(h_result(r), "total_size")->valuedouble, 8);
	/* the sandbox paused: the proxy cannot find it, the control plane says
   * paused; then gone: both say so */
	call(h, 10, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 502, NULL,
		"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox was not found\",\"code\":502}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://api.test/sandboxes/sbx1");
	h_respond(h, req->op, 200, NULL, "{\"sandboxID\":\"sbx1\",\"state\":\"paused\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32015);
	CHECK_STR(data_str(r, "status"), "paused");
	call(h, 11, "files.write", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 502, NULL,
		"{\"sandboxId\":\"sbx1\",\"message\":\"The sandbox was not found\",\"code\":502}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":404,\"message\":\"not found\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(data_str(r, "sdk_code"), "E2009");
	CHECK(h_pending(h) == 0);
	h_free(h);
}

/* --- files.write ----------------------------------------------------------------------- */

static void respond_stat(harness *h, const char *entry)
{
	h_http *req = h_http_next(h);
	CHECK(req != NULL);
	if (!req)
		return;
	CHECK_STR(req->url, "http://envd.test/filesystem.Filesystem/Stat");
	char body[2048];
	snprintf(body, sizeof body, "{\"entry\":%s}", entry);
	h_respond(h, req->op, 200, NULL, body);
}

static void test_write(void)
{
	harness *h = ready();
	call(h, 1, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/a b.txt\",\"content\":\"aGVsbG8=\",\"encoding\":\"base64\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->method, "POST");
	CHECK_STR(req->url, "http://envd.test/files?path=%2Fhome%2Fuser%2Fa%20b.txt");
	CHECK_STR(h_header(req, "Content-Type"), "application/octet-stream");
	CHECK_STR(req->body, "hello");
	h_respond(h, req->op, 200, NULL,
		"[{\"path\":\"/home/user/a b.txt\",\"name\":\"a b.txt\",\"type\":\"file\"}]");
	respond_stat(h, ENTRY);
	cJSON *r = h_send(h);
	CHECK_STR(str(h_result(r), "path"), "/home/user/a b.txt");
	CHECK_STR(str(h_result(r), "owner"), "agent");
	/* envd said 200 but confirmed nothing: not a success */
	call(h, 2, "files.write", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "[]");
	CHECK_NUM(h_error_code(h_send(h)), -32017);
	/* no space: its own kind */
	call(h, 3, "files.write", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 507, NULL, "{\"code\":507,\"message\":\"not enough disk space available\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32019);
	CHECK_STR(data_str(r, "kind"), "no_space");
	/* the connection closed mid-upload: an error, never success */
	call(h, 4, "files.write", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"content\":\"x\"}");
	req = h_http_next(h);
	e2bw_core_http_fail(h->core, req->op, E2BW_NET_RESET, h->now);
	h_drain(h);
	CHECK_NUM(h_error_code(h_send(h)), -32012);
	/* permission denied */
	call(h, 5, "files.write", "{\"sandbox_id\":\"sbx1\",\"path\":\"/root/x\",\"content\":\"x\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 500, NULL,
		"{\"code\":500,\"message\":\"error opening file: open /root/x: permission denied\"}");
	CHECK_STR(data_str(h_send(h), "kind"), "permission_denied");
	CHECK(h_pending(h) == 0);
	h_free(h);
}

static void test_write_multipart_for_old_envd(void)
{
	harness *h = ready_with(CONFIG, DETAIL_OLD);
	call(h, 1, "files.write", "{\"sandbox_id\":\"sbx1\",\"path\":\"/tmp/x.txt\",\"content\":\"data\"}");
	h_http *req = h_http_next(h);
	const char *type = h_header(req, "Content-Type");
	CHECK(type && strncmp(type, "multipart/form-data; boundary=", 30) == 0);
	char want[512];
	snprintf(want, sizeof want,
		"--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"/tmp/x.txt\"\r\nContent-Type: application/octet-stream\r\n\r\ndata\r\n--%s--\r\n",
		type + 30, type + 30);
	CHECK_STR(req->body, want);
	h_free(h);
}

/* mode and owner in the same call: chmod/chown as root with argv, then Stat */
static void test_write_with_mode_and_owner(void)
{
	harness *h = ready();
	call(h, 1, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/a b.txt\",\"content\":\"hello\",\"mode\":416,\"owner\":\"agent\",\"group\":\"agent\"}");
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 200, NULL,
		"[{\"path\":\"/home/user/a b.txt\",\"name\":\"a b.txt\",\"type\":\"file\"}]");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/process.Process/Start");
	CHECK_STR(h_header(req, "Authorization"), "Basic cm9vdDo="); /* root */
	cJSON *start = cJSON_Parse(req->body + 5);
	const cJSON *args = field(field(start, "process"), "args");
	CHECK_STR(str(field(start, "process"), "cmd"), "/bin/sh");
	CHECK_NUM(cJSON_GetArraySize(args), 6);
	CHECK_STR(cJSON_GetArrayItem(args, 3)->valuestring, "0640");
	CHECK_STR(cJSON_GetArrayItem(args, 4)->valuestring, "agent:agent");
	CHECK_STR(cJSON_GetArrayItem(args, 5)->valuestring, "/home/user/a b.txt");  /* its own argv entry */
	CHECK(strstr(cJSON_GetArrayItem(args, 1)->valuestring, "a b.txt") == NULL); /* never in the script */
	cJSON_Delete(start);
	e2bw_buf body = {0};
	const char *start_ev = "{\"event\":{\"start\":{\"pid\":7}}}",
		   *end_ev = "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}";
	e2bw_env_encode(&body, 0, start_ev, strlen(start_ev));
	e2bw_env_encode(&body, 0, end_ev, strlen(end_ev));
	e2bw_env_encode(&body, E2BW_ENV_FLAG_END_STREAM, "{}", 2);
	respond_split(h, req->op, 200, "content-type: application/connect+json\n", (const uint8_t *)body.data,
		body.len, 3, 40);
	e2bw_buf_free(&body);
	respond_stat(h, ENTRY);
	cJSON *r = h_send(h);
	CHECK_NUM(h_id(r), 1);
	CHECK_NUM(field(h_result(r), "mode")->valuedouble, 0640);
	CHECK(h_pending(h) == 0);

	/* chown of an unknown account: a typed error naming the field */
	call(h, 2, "files.chmod", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"owner\":\"ghost\"}");
	req = h_http_next(h);
	e2bw_buf b2 = {0}, b64 = {0};
	const char *err = "chown: invalid user: 'ghost'\n";
	e2bw_base64_encode(&b64, (const uint8_t *)err, strlen(err));
	char data_ev[256];
	snprintf(data_ev, sizeof data_ev, "{\"event\":{\"data\":{\"stderr\":\"%s\"}}}", b64.data);
	const char *end1 =
		"{\"event\":{\"end\":{\"exitCode\":1,\"exited\":true,\"status\":\"exit status 1\"}}}";
	e2bw_env_encode(&b2, 0, start_ev, strlen(start_ev));
	e2bw_env_encode(&b2, 0, data_ev, strlen(data_ev));
	e2bw_env_encode(&b2, 0, end1, strlen(end1));
	e2bw_env_encode(&b2, E2BW_ENV_FLAG_END_STREAM, "{}", 2);
	respond_split(h, req->op, 200, "", (const uint8_t *)b2.data, b2.len, 0, 0);
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32602);
	CHECK_STR(data_str(r, "field"), "owner");
	e2bw_buf_free(&b2);
	e2bw_buf_free(&b64);
	h_free(h);
}

/* --- directory operations ----------------------------------------------------------- */

/* No user named: no Authorization, so envd acts as the sandbox's default
 * user (a template's setUser), as the E2B SDK leaves it. */
static void test_default_user_not_sent(void)
{
	harness *h = ready();
	call(h, 1, "files.list", "{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/filesystem.Filesystem/ListDir");
	CHECK(h_header(req, "Authorization") == NULL);
	h_free(h);
}

static void test_dirs(void)
{
	harness *h = ready();
	call(h, 1, "files.list",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user\",\"depth\":2,\"user\":\"root\"}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/filesystem.Filesystem/ListDir");
	CHECK_STR(h_header(req, "Authorization"), "Basic cm9vdDo=");
	cJSON *m = cJSON_Parse(req->body);
	CHECK_STR(str(m, "path"), "/home/user");
	CHECK_NUM(field(m, "depth")->valuedouble, 2);
	cJSON_Delete(m);
	h_respond(h, req->op, 200, NULL,
		"{\"entries\":[" ENTRY
		",{\"name\":\"d\",\"type\":\"FILE_TYPE_DIRECTORY\",\"path\":\"/home/user/d\"}]}");
	cJSON *r = h_send(h);
	CHECK_NUM(cJSON_GetArraySize(field(h_result(r), "entries")), 2);
	CHECK_STR(str(cJSON_GetArrayItem(field(h_result(r), "entries"), 1), "type"), "dir");
	/* list of a file: not-a-directory */
	call(h, 2, "files.list", "{\"sandbox_id\":\"sbx1\",\"path\":\"/etc/passwd\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 400, NULL,
		"{\"code\":\"invalid_argument\",\"message\":\"path is not a directory: /etc/passwd\"}");
	r = h_send(h);
	CHECK_STR(data_str(r, "kind"), "not_directory");
	CHECK_STR(data_str(r, "backend_code"), "invalid_argument");
	/* mkdir: created */
	call(h, 3, "files.mkdir", "{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/d/e\"}");
	req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/filesystem.Filesystem/MakeDir");
	h_respond(h, req->op, 200, NULL,
		"{\"entry\":{\"name\":\"e\",\"type\":\"FILE_TYPE_DIRECTORY\",\"path\":\"/home/user/d/e\"}}");
	r = h_send(h);
	CHECK(cJSON_IsTrue(field(h_result(r), "created")));
	CHECK_STR(str(field(h_result(r), "entry"), "path"), "/home/user/d/e");
	/* mkdir of an existing directory: not an error */
	call(h, 4, "files.mkdir", "{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/d\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 409, NULL,
		"{\"code\":\"already_exists\",\"message\":\"directory already exists: /home/user/d\"}");
	respond_stat(h, "{\"name\":\"d\",\"type\":\"FILE_TYPE_DIRECTORY\",\"path\":\"/home/user/d\"}");
	r = h_send(h);
	CHECK(cJSON_IsFalse(field(h_result(r), "created")));
	/* mkdir where a file is: already exists, as an error */
	call(h, 5, "files.mkdir", "{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/a b.txt\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 400, NULL,
		"{\"code\":\"invalid_argument\",\"message\":\"path already exists and is not a directory: /home/user/a b.txt\"}");
	respond_stat(h, ENTRY);
	CHECK_STR(data_str(h_send(h), "kind"), "already_exists");
	/* move, remove, stat of a missing path */
	call(h, 6, "files.move", "{\"sandbox_id\":\"sbx1\",\"source\":\"/a\",\"destination\":\"/b\"}");
	req = h_http_next(h);
	m = cJSON_Parse(req->body);
	CHECK_STR(str(m, "source"), "/a");
	CHECK_STR(str(m, "destination"), "/b");
	cJSON_Delete(m);
	h_respond(h, req->op, 200, NULL,
		"{\"entry\":{\"name\":\"b\",\"type\":\"FILE_TYPE_FILE\",\"path\":\"/b\"}}");
	CHECK_STR(str(h_result(h_send(h)), "path"), "/b");
	call(h, 7, "files.remove", "{\"sandbox_id\":\"sbx1\",\"path\":\"/b\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 200, NULL, "{}");
	CHECK(cJSON_IsObject(h_result(h_send(h))));
	call(h, 8, "files.stat", "{\"sandbox_id\":\"sbx1\",\"path\":\"/b\"}");
	req = h_http_next(h);
	h_respond(h, req->op, 404, NULL, "{\"code\":\"not_found\",\"message\":\"file not found: /b\"}");
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32002);
	CHECK_STR(data_str(r, "sdk_code"), "E2001");
	/* search: ListDir to the depth, names filtered, bounded count */
	call(h, 9, "files.search",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home\",\"pattern\":\"*.txt\",\"limit\":1}");
	req = h_http_next(h);
	m = cJSON_Parse(req->body);
	CHECK_NUM(field(m, "depth")->valuedouble, 8);
	cJSON_Delete(m);
	h_respond(h, req->op, 200, NULL,
		"{\"entries\":[{\"name\":\"x.md\",\"path\":\"/home/x.md\"},{\"name\":\"a.txt\",\"path\":\"/home/a.txt\"},{\"name\":\"b.txt\",\"path\":\"/home/q/b.txt\"}]}");
	r = h_send(h);
	CHECK_NUM(cJSON_GetArraySize(field(h_result(r), "entries")), 1);
	CHECK_STR(str(cJSON_GetArrayItem(field(h_result(r), "entries"), 0), "name"), "a.txt");
	CHECK(cJSON_IsTrue(field(h_result(r), "truncated")));
	CHECK(h_pending(h) == 0);
	h_free(h);
}

/* --- files.watch ------------------------------------------------------------------------- */

static void test_watch(void)
{
	harness *h = ready();
	call(h, 1, "files.watch", "{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user\",\"recursive\":true}");
	h_http *req = h_http_next(h);
	CHECK_STR(req->url, "http://envd.test/filesystem.Filesystem/WatchDir");
	CHECK_STR(h_header(req, "Keepalive-Ping-Interval"), "2");
	cJSON *m = cJSON_Parse(req->body + 5);
	CHECK_STR(str(m, "path"), "/home/user");
	CHECK(cJSON_IsTrue(field(m, "recursive")));
	cJSON_Delete(m);
	uint32_t op = req->op;
	e2bw_buf b = {0};
	/* WatchDirResponse's oneof is at top level (no "event" wrapper, unlike process events) */
	const char *ev[] = {"{\"start\":{}}", "{\"keepalive\":{}}",
		"{\"filesystem\":{\"name\":\"sub/new.txt\",\"type\":\"EVENT_TYPE_CREATE\"}}",
		"{\"filesystem\":{\"name\":\"x\",\"type\":\"EVENT_TYPE_UNSPECIFIED\"}}"};
	for (int i = 0; i < 4; i++)
		e2bw_env_encode(&b, 0, ev[i], strlen(ev[i]));
	e2bw_core_http_head(h->core, op, 200, "", 0, h->now);
	for (size_t i = 0; i < b.len; i++)
		e2bw_core_http_body(h->core, op, (const uint8_t *)b.data + i, 1, h->now); /* byte by byte */
	h_drain(h);
	e2bw_buf_free(&b);
	cJSON *r = h_send(h);
	const char *watch_id = str(h_result(r), "watch_id");
	CHECK(watch_id && watch_id[0] == 'w');
	cJSON *n = h_send(h);
	CHECK_STR(str(n, "method"), "files.event");
	const cJSON *p = field(n, "params");
	CHECK_STR(str(p, "type"), "create");
	CHECK_STR(str(p, "name"), "sub/new.txt");
	CHECK_STR(str(p, "path"), "/home/user/sub/new.txt");
	CHECK_STR(str(p, "watch_id"), watch_id);
	CHECK_NUM(field(p, "request_id")->valuedouble, 1);
	CHECK(h_pending(h) == 0); /* keepalive and unknown types: nothing */
	char params[128];
	snprintf(params, sizeof params, "{\"sandbox_id\":\"sbx1\",\"watch_id\":\"%s\"}", watch_id);
	call(h, 2, "files.unwatch", params);
	n = h_send(h);
	CHECK_STR(str(n, "method"), "files.watch_end");
	CHECK_STR(str(field(n, "params"), "reason"), "cancelled");
	CHECK(field(field(n, "params"), "failure") == NULL);
	CHECK(cJSON_IsObject(h_result(h_send(h))));
	CHECK(h_cancel_next(h) == op);
	call(h, 3, "files.unwatch", params); /* exactly one end: a second unwatch finds nothing */
	CHECK_NUM(h_error_code(h_send(h)), -32002);
	CHECK(h_pending(h) == 0);

	/* silence past three keepalive intervals: one watch_end, failure unreachable */
	call(h, 4, "files.watch", "{\"sandbox_id\":\"sbx1\",\"path\":\"/tmp\"}");
	req = h_http_next(h);
	e2bw_buf b2 = {0};
	e2bw_env_encode(&b2, 0, ev[0], strlen(ev[0]));
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_core_http_body(h->core, req->op, (const uint8_t *)b2.data, b2.len, h->now);
	e2bw_buf_free(&b2);
	h_drain(h);
	CHECK(h_result(h_send(h)) != NULL);
	h->now += 6001;
	e2bw_core_tick(h->core, h->now);
	h_drain(h);
	n = h_send(h);
	CHECK_STR(str(n, "method"), "files.watch_end");
	CHECK_STR(str(field(n, "params"), "reason"), "failure");
	CHECK_STR(str(field(field(field(n, "params"), "failure"), "data"), "kind"), "unreachable");
	CHECK(h_send(h) == NULL);
	CHECK(h_cancel_next(h) == req->op); /* the silent request is abandoned */

	/* keepalives but never a start: the call times out (request_timeout 10 s) */
	call(h, 6, "files.watch", "{\"sandbox_id\":\"sbx1\",\"path\":\"/slow\"}");
	req = h_http_next(h);
	e2bw_core_http_head(h->core, req->op, 200, "", 0, h->now);
	e2bw_buf ka = {0};
	e2bw_env_encode(&ka, 0, ev[1], strlen(ev[1]));
	for (int i = 0; i < 3; i++) {
		h->now += 4000;
		e2bw_core_http_body(h->core, req->op, (const uint8_t *)ka.data, ka.len, h->now);
		e2bw_core_tick(h->core, h->now);
		h_drain(h);
	}
	e2bw_buf_free(&ka);
	r = h_send(h);
	CHECK_NUM(h_id(r), 6);
	CHECK_NUM(h_error_code(r), -32013);
	CHECK(h_cancel_next(h) == req->op);
	CHECK(h_http_next(h) == NULL); /* nothing killed: a watch has no process */

	/* a missing directory fails the call itself */
	call(h, 5, "files.watch", "{\"sandbox_id\":\"sbx1\",\"path\":\"/nope\"}");
	req = h_http_next(h);
	e2bw_buf b3 = {0};
	const char *end = "{\"error\":{\"code\":\"not_found\",\"message\":\"path not found: /nope\"}}";
	e2bw_env_encode(&b3, E2BW_ENV_FLAG_END_STREAM, end, strlen(end));
	respond_split(h, req->op, 200, "", (const uint8_t *)b3.data, b3.len, 1, 2);
	e2bw_buf_free(&b3);
	r = h_send(h);
	CHECK_NUM(h_id(r), 5);
	CHECK_NUM(h_error_code(r), -32002);
	h_free(h);
}

/* --- URLs ------------------------------------------------------------------------------------ */

static void test_urls(void)
{
	harness *h = ready();
	call(h, 1, "files.url",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/a b.txt\",\"operation\":\"read\",\"expires_in\":3600}");
	cJSON *r = h_send(h);
	const cJSON *res = h_result(r);
	/* now = 2026-01-01T00:00:00Z; + 3600 s; signatures from node's crypto
   * (test_signature); without a user, none is named and the empty username
   * is signed, as envd checks it */
	CHECK_STR(str(res, "url"),
		"http://envd.test/files?path=%2Fhome%2Fuser%2Fa%20b.txt"
		"&signature=v1_F06j86coiWOpQZdVyaxlUA8fWNnYCTJH6FdOj3xY%2Bzc&signature_expiration=1767229200");
	call(h, 4, "files.url",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/home/user/a b.txt\",\"operation\":\"read\",\"expires_in\":3600,\"user\":\"user\"}");
	res = h_result(h_send(h));
	CHECK_STR(str(res, "url"),
		"http://envd.test/files?path=%2Fhome%2Fuser%2Fa%20b.txt&username=user"
		"&signature=v1_8naPndJmDHAM4cvAQvKJ9yveHiE1qdKBzOoG3s5yFcs&signature_expiration=1767229200");
	CHECK_STR(str(res, "method"), "GET");
	CHECK_STR(str(res, "expires_at"), "2026-01-01T01:00:00Z");
	CHECK(h->nhttp == h->http_pos); /* computed locally */
	call(h, 2, "files.url",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/tmp/\xc3\xbc.bin\",\"operation\":\"write\",\"user\":\"root\"}");
	res = h_result(h_send(h));
	CHECK_STR(str(res, "method"), "POST");
	CHECK(strstr(str(res, "url"), "tok-ENVD") == NULL); /* the token never appears */
	call(h, 3, "ports.url", "{\"sandbox_id\":\"sbx1\",\"port\":8080}");
	res = h_result(h_send(h));
	CHECK_STR(str(res, "url"), "http://envd.test");
	CHECK_STR(str(field(res, "headers"), "E2b-Sandbox-Id"), "sbx1");
	CHECK_STR(str(field(res, "headers"), "E2b-Sandbox-Port"), "8080");
	h_free(h);
	/* E2B host routing: the port in the host name, no headers */
	h = ready_with(CONFIG_E2B,
		"{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"domain\":\"eu.e2b.test\"}");
	call(h, 1, "ports.url", "{\"sandbox_id\":\"sbx1\",\"port\":3000}");
	res = h_result(h_send(h));
	CHECK_STR(str(res, "url"), "https://3000-sbx1.eu.e2b.test");
	CHECK_NUM(cJSON_GetArraySize(field(res, "headers")), 0);
	/* no envd token: an unsigned link that does not expire */
	call(h, 2, "files.url", "{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"operation\":\"read\"}");
	res = h_result(h_send(h));
	CHECK_STR(str(res, "url"), "https://49983-sbx1.eu.e2b.test/files?path=%2Fa");
	CHECK(cJSON_IsNull(field(res, "expires_at")));
	h_free(h);
	/* a local backend (one sandbox_url) that names a *.localhost domain,
   * which Node and glibc do not resolve: sandbox_url with the routing
   * headers, and the host name (sandbox_url's scheme) beside it for
   * browsers; network.allowPublicTraffic false: the token header, which a
   * SandboxDetail learned later does not drop */
	h = ready_with(CONFIG,
		"{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"domain\":\"localhost:3001\","
		"\"trafficAccessToken\":\"5eed0123456789abcdef7\"}");
	call(h, 1, "ports.url", "{\"sandbox_id\":\"sbx1\",\"port\":8080}");
	res = h_result(h_send(h));
	CHECK_STR(str(res, "url"), "http://envd.test");
	CHECK_STR(str(res, "host_url"), "http://8080-sbx1.localhost:3001");
	CHECK_STR(str(field(res, "headers"), "E2b-Sandbox-Id"), "sbx1");
	CHECK_STR(str(field(res, "headers"), "E2b-Sandbox-Port"), "8080");
	CHECK_STR(str(field(res, "headers"), "e2b-traffic-access-token"), "5eed0123456789abcdef7");
	CHECK_NUM(cJSON_GetArraySize(field(res, "headers")), 3);
	call(h, 2, "sandbox.get", "{\"sandbox_id\":\"sbx1\"}");
	h_http *req = h_http_next(h);
	h_respond(h, req->op, 200, NULL,
		"{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"domain\":\"localhost:3001\"}");
	h_send(h);
	call(h, 3, "ports.url", "{\"sandbox_id\":\"sbx1\",\"port\":8080}");
	res = h_result(h_send(h));
	CHECK_STR(str(field(res, "headers"), "e2b-traffic-access-token"), "5eed0123456789abcdef7");
	h_free(h);
	/* the same backend with a --domain whose wildcard name resolves, and one
   * in another case of .localhost */
	static const struct {
		const char *domain, *url, *host_url;
	} domains[] = {
		{"sbx.example.org:3001", "http://8080-sbx1.sbx.example.org:3001", NULL},
		{"dev.LOCALHOST", "http://envd.test", "http://8080-sbx1.dev.LOCALHOST"},
		{"notlocalhost:3001", "http://8080-sbx1.notlocalhost:3001", NULL},
	};
	for (size_t i = 0; i < sizeof domains / sizeof domains[0]; i++) {
		char detail[256];
		snprintf(detail, sizeof detail,
			"{\"sandboxID\":\"sbx1\",\"state\":\"running\",\"domain\":\"%s\"}",
			domains[i].domain);
		h = ready_with(CONFIG, detail);
		call(h, 1, "ports.url", "{\"sandbox_id\":\"sbx1\",\"port\":8080}");
		res = h_result(h_send(h));
		CHECK_STR(str(res, "url"), domains[i].url);
		if (domains[i].host_url)
			CHECK_STR(str(res, "host_url"), domains[i].host_url);
		else
			CHECK(field(res, "host_url") == NULL);
		CHECK_NUM(cJSON_GetArraySize(field(res, "headers")), domains[i].host_url ? 2 : 0);
		h_free(h);
	}
}

/* Long base64 content is checked in 64 KiB pieces (param_spec.c): what is
 * refused and what goes through must not depend on where the pieces end. */
static void write_b64(harness *h, const char *b64, size_t n, int valid)
{
	const char *pre =
		"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"files.write\",\"params\":{\"sandbox_id\":\"sbx1\",\"path\":\"/a\",\"encoding\":\"base64\",\"content\":\"";
	size_t p = strlen(pre);
	char *msg = malloc(p + n + 4);
	memcpy(msg, pre, p);
	memcpy(msg + p, b64, n);
	memcpy(msg + p + n, "\"}}", 4);
	h_submit(h, msg);
	free(msg);
	if (valid) {
		h_http *req = h_http_next(h);
		CHECK(req != NULL);
		if (req)
			h_respond(h, req->op, 500, NULL, "no");
		h_send(h);
	} else {
		cJSON *r = h_send(h);
		CHECK_NUM(h_error_code(r), -32602);
		CHECK_STR(data_str(r, "field"), "content");
		CHECK(strstr(h_error_message(r), "encoding is") != NULL); /* refused by the parameter check */
		CHECK(h->nhttp == h->http_pos);
	}
}

static void test_long_base64(void)
{
	harness *h = ready();
	size_t n = 65536 * 2 + 8;
	char *b = malloc(n);
	memset(b, 'Q', n);
	write_b64(h, b, n, 1);
	b[65535] = '='; /* padding where a piece ends, content after it */
	write_b64(h, b, n, 0);
	b[65535] = 'Q';
	b[65536 + 10] = '=';
	write_b64(h, b, n, 0);
	b[65536 + 10] = 'Q';
	memset(b + n - 2, '=', 2); /* padding at the very end */
	write_b64(h, b, n, 1);
	memset(b + 65536 - 2, '=', n - 65536 + 2); /* only padding from a piece's end on */
	write_b64(h, b, n, 1);
	write_b64(h, b, 65533, 0); /* a length no base64 has */
	b[65533] = '@';
	write_b64(h, b, n, 0);
	free(b);
	h_free(h);
}

/* Encoding names as hosts write them: utf8 or the IANA UTF-8, base64, in
 * any case; the answer names the canonical form. */
static void test_encoding_names(void)
{
	harness *h = ready();
	static const struct {
		const char *name, *uploaded, *answered; /* "hi" written as aGk=, then "hi" read back */
	} names[] = {
		{"base64", "hi", "base64"},
		{"BASE64", "hi", "base64"},
		{"Base64", "hi", "base64"},
		{"utf8", "aGk=", "utf8"},
		{"utf-8", "aGk=", "utf8"},
		{"UTF-8", "aGk=", "utf8"},
		{"Utf8", "aGk=", "utf8"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		int base64 = !strcmp(names[i].answered, "base64");
		char params[256];
		snprintf(params, sizeof params,
			"{\"sandbox_id\":\"sbx1\",\"path\":\"/w\",\"content\":\"aGk=\",\"encoding\":\"%s\"}",
			names[i].name);
		call(h, 1, "files.write", params);
		h_http *req = h_http_next(h);
		CHECK(req != NULL);
		if (!req)
			break;
		CHECK_STR(req->body,
			names[i].uploaded); /* base64: decoded to the exact bytes; text: as written */
		h_respond(h, req->op, 200, NULL, "[{\"path\":\"/w\",\"name\":\"w\",\"type\":\"file\"}]");
		respond_stat(h, ENTRY);
		CHECK(h_result(h_send(h)) != NULL);
		snprintf(params, sizeof params,
			"{\"sandbox_id\":\"sbx1\",\"path\":\"/w\",\"encoding\":\"%s\"}", names[i].name);
		call(h, 2, "files.read", params);
		req = h_http_next(h);
		h_respond(h, req->op, 200, "content-length: 2\n", "hi");
		const cJSON *res = h_result(h_send(h));
		CHECK_STR(str(res, "content"), base64 ? "aGk=" : "hi");
		CHECK_STR(str(res, "encoding"), names[i].answered);
	}
	/* anything else is still refused, naming the field */
	expect_invalid(h, "files.read", "{\"sandbox_id\":\"sbx1\",\"path\":\"/w\",\"encoding\":\"utf-16\"}",
		"encoding");
	expect_invalid(h, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/w\",\"content\":\"x\",\"encoding\":\"base-64\"}",
		"encoding");
	/* the cross-field check reads the name the same way: not base64 is refused */
	expect_invalid(h, "files.write",
		"{\"sandbox_id\":\"sbx1\",\"path\":\"/w\",\"content\":\"@@\",\"encoding\":\"BASE64\"}",
		"content");
	CHECK(h_pending(h) == 0);
	h_free(h);
}

void suite_files(void)
{
	test_encoding_names();
	test_long_base64();
	test_sha256();
	test_signature();
	test_glob();
	test_multipart();
	test_entry_mapping();
	test_bad_input();
	test_read_request();
	test_read_binary_every_chunking();
	test_read_text_every_chunking();
	test_read_failures();
	test_write();
	test_write_multipart_for_old_envd();
	test_write_with_mode_and_owner();
	test_default_user_not_sent();
	test_dirs();
	test_watch();
	test_urls();
}
