/* Every JSON-RPC envelope error path, through the core's public API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jsonrpc.h"
#include "harness.h"
#include "suites.h"

static void expect_error(harness *h, const char *msg, int code, int id_is_null)
{
	h_submit(h, msg);
	cJSON *r = h_send(h);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_NUM(h_error_code(r), code);
	const cJSON *id = cJSON_GetObjectItem(r, "id");
	if (id_is_null)
		CHECK(cJSON_IsNull(id));
	CHECK_STR(cJSON_GetObjectItem(r, "jsonrpc")->valuestring, "2.0");
	CHECK(h_pending(h) == 0);
}

static void expect_silence(harness *h, const char *msg)
{
	h_submit(h, msg);
	CHECK(h_pending(h) == 0);
}

/* Long plain strings are cut out before cJSON parses and put back after
 * (jsonrpc.c): the tree must be the one cJSON builds from the whole text,
 * wherever the string sits. "@" in a template stands for 5000 'x'. */
/* Member by member, in order (cJSON_Compare looks members up by name, and
 * duplicate names are part of what is compared here). */
static int same_tree(const cJSON *a, const cJSON *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type || (a->string == NULL) != (b->string == NULL))
		return 0;
	if (a->string && strcmp(a->string, b->string) != 0)
		return 0;
	if ((a->valuestring == NULL) != (b->valuestring == NULL) ||
		(a->valuestring && strcmp(a->valuestring, b->valuestring) != 0))
		return 0;
	if (cJSON_IsNumber(a) && a->valuedouble != b->valuedouble)
		return 0;
	for (a = a->child, b = b->child; a && b; a = a->next, b = b->next)
		if (!same_tree(a, b))
			return 0;
	return a == b;
}

static void expect_same_tree(const char *tmpl)
{
	size_t n = 5000, len = 0;
	char *text = malloc(strlen(tmpl) * n + 1);
	for (const char *t = tmpl; *t; t++)
		if (*t == '@')
			memset(text + len, 'x', n), len += n;
		else
			text[len++] = *t;
	text[len] = '\0';
	e2bw_rpc_request req;
	cJSON *error = NULL;
	e2bw_rpc_parse(text, len, &req, &error);
	cJSON *want = cJSON_ParseWithLength(text, len);
	int same = (want == NULL) == (req.root == NULL) && same_tree(want, req.root);
	CHECK(same);
	if (!same)
		fprintf(stderr, "  tree differs for %s\n", tmpl);
	cJSON_Delete(want);
	cJSON_Delete(error);
	e2bw_rpc_request_free(&req);
	free(text);
}

static void test_long_strings(void)
{
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"files.write\",\"params\":{\"path\":\"/a\",\"content\":\"@\"}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":[1,{\"b\":\"\"},\"@\",\"y@\"]}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"c\":\"\",\"c\":\"@\",\"c\":\"\"}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"@\":\"@@\",\"d\":\"@\\n\"}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"e\":\"@\\u00e9@\",\"f\":\"\xc3\xa9@\"}}");
	expect_same_tree("{\"jsonrpc\":\"2.0\",\"id\":\"@\",\"method\":\"m\",\"params\":{}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"g\":[[[[[[[[[[\"@\"]]]]]]]]]]}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"h\":[[[[[[\"@\"]]]]]]}}");
	expect_same_tree(
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"i\":\"@\"}"); /* not JSON */
	expect_same_tree("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"i\":\"@\" \"j\":1}}");
	expect_same_tree("[\"@\"]");
	expect_same_tree("\"@\"");
	expect_same_tree("{\"a\":\"@");
	expect_same_tree("]]]{\"a\":[\"@\"],\"b\":{\"c\":1}}"); /* closes before it opens: not JSON */
}

void suite_jsonrpc(void)
{
	test_long_strings();
	harness *h = h_new();
	expect_error(h, "not json", -32700, 1);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"} trailing", -32700, 1);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,", -32700, 1);
	expect_error(h, "", -32700, 1);
	expect_error(h, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}]", -32600, 1);
	expect_error(h, "42", -32600, 1);
	expect_error(h, "\"string\"", -32600, 1);
	expect_error(h, "null", -32600, 1);
	expect_error(h, "{\"id\":1,\"method\":\"initialize\"}", -32600, 0);
	expect_error(h, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"initialize\"}", -32600, 0);
	expect_error(h, "{\"jsonrpc\":2,\"id\":1,\"method\":\"initialize\"}", -32600, 0);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"initialize\"}", -32600, 1);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"initialize\"}", -32600, 1);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1.,\"method\":\"initialize\"}", -32600,
		1); /* cJSON takes it; JSON does not */
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1}", -32600, 0);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", -32600, 0);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", -32600, 0);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":[1]}", -32602, 0);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":\"x\"}", -32602,
		0);
	expect_error(h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no.such\"}", -32601, 0);
	/* a NUL in any string but the id is refused, naming its member */
	expect_error(h,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"a\\u0000b\"}}",
		-32602, 0);
	CHECK(strstr(h_send_text_last(h), "\"field\":\"sandbox_id\"") != NULL);
	expect_error(h,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"exec.run\",\"params\":{\"envs\":{\"A\":\"\\u0000\"}}}",
		-32602, 0);
	CHECK(strstr(h_send_text_last(h), "\"field\":\"envs.A\"") != NULL);
	expect_error(h,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sandbox.get\",\"params\":{\"sandbox_id\":\"x\"}}",
		-32600, 0);

	/* the id comes back exactly: strings, null, and integers up to 2^53 */
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":\"abc-1\",\"method\":\"no.such\"}");
	cJSON *r = h_send(h);
	CHECK_STR(cJSON_GetObjectItem(r, "id")->valuestring, "abc-1");
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"method\":\"no.such\"}");
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "\"id\":9007199254740991") != NULL);
	/* ...whatever its size or spelling: the answer carries the id's own text */
	static const char *const ids[] = {"9007199254740993", "12345678901234567890", "0.1", "1e3", "-0",
		"1E+2", "1e999", "-12345678901234567890.5e-7", "\"x\\u0000one\"", "\"x\\u0000two\"",
		"\"\\u00e9\\/\\\"\""};
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		char msg[256], want[128];
		snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"method\":\"no.such\", \"id\" : %s }",
			ids[i]);
		snprintf(want, sizeof want, "\"id\":%s,", ids[i]);
		h_submit(h, msg);
		r = h_send(h);
		CHECK_NUM(h_error_code(r), -32601);
		CHECK(strstr(h_send_text_last(h), want) != NULL);
	}
	/* a first "id" member is the one answered, as cJSON reads it */
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":7.50,\"method\":\"no.such\",\"x\":{\"id\":8}}");
	h_send(h);
	CHECK(strstr(h_send_text_last(h), "\"id\":7.50,") != NULL);
	h_submit(h, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"no.such\"}");
	r = h_send(h);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(r, "id")) && h_error_code(r) == -32601);

	/* deep nesting is refused before anything walks it */
	char deep[4096] = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{\"x\":";
	for (int i = 0; i < 100; i++)
		strcat(deep, "[");
	for (int i = 0; i < 100; i++)
		strcat(deep, "]");
	strcat(deep, "}}");
	expect_error(h, deep, -32600, 0);
	char deeper[8192] = "";
	for (int i = 0; i < 3000; i++)
		strcat(deeper, "[");
	expect_error(h, deeper, -32700, 1); /* cJSON's own nesting limit */

	/* notifications and stray responses are never answered */
	expect_silence(h, "{\"jsonrpc\":\"2.0\",\"method\":\"no.such\"}");
	expect_silence(h, "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":[1]}");
	expect_silence(h, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");

	/* over-size: a submitted message and an NDJSON line; the stream goes on */
	size_t big = E2BW_MAX_MESSAGE_BYTES + 10;
	char *huge = malloc(big);
	memset(huge, ' ', big);
	huge[0] = '{';
	e2bw_core_submit(h->core, huge, big, h->now);
	h_drain(h);
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32600);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
	for (size_t off = 0; off < big; off += 65536)
		e2bw_core_ndjson_feed(h->core, huge + off, big - off < 65536 ? big - off : 65536, h->now);
	const char *next = "\n{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"no.such\"}\n";
	e2bw_core_ndjson_feed(h->core, next, strlen(next), h->now);
	h_drain(h);
	r = h_send(h);
	CHECK_NUM(h_error_code(r), -32600);
	CHECK(strstr(h_error_message(r), "limit") != NULL);
	r = h_send(h);
	CHECK_NUM(h_id(r), 77);
	CHECK_NUM(h_error_code(r), -32601);
	free(huge);
	h_free(h);
}
