/* http/http_protojson.c: request messages read as connect-go's JSON codec
 * reads them — JSON or proto names, null as unset, uint32 from numbers or
 * decimal strings, bytes in either base64 alphabet, enums by name or
 * number — and an invalid_argument naming the field otherwise. */
#include <cJSON.h>
#include <stdlib.h>

#include "check.h"
#include "http/http_connect.h"
#include "http/http_protojson.h"
#include "suites.h"

static const struct protojson_enum_value signals[] = {
	{"SIGNAL_UNSPECIFIED", 0},
	{"SIGNAL_SIGTERM", 15},
	{"SIGNAL_SIGKILL", 9},
};

void suite_protojson(void)
{
	cJSON *m = cJSON_Parse(
		"{\"tag\":\"t1\",\"keepalive_ms\":\"42\",\"pid\":7,\"stdin\":false,\"cwd\":null,"
		"\"args\":[\"-c\",\"x\"],\"envs\":{\"A\":\"1\"},\"data\":\"aGk-_w\","
		"\"signal\":\"SIGNAL_SIGKILL\",\"code\":15,\"process\":{\"pid\":3},"
		"\"bad_uint\":-1,\"frac\":1.5,\"big\":\"4294967296\",\"str_num\":7,"
		"\"args_bad\":[\"a\",1],\"envs_bad\":{\"A\":1},\"data_bad\":\"***\",\"signal_bad\":\"SIGHUP\"}");
	CHECK(m != NULL);
	struct err err = {0};
	const char *s = NULL;
	uint32_t u = 0;
	bool b = true;
	const cJSON *item = NULL;
	int32_t e = 0;

	/* names: the JSON name, else the proto name; null and missing are unset */
	CHECK(protojson_string(m, "tag", "tag", &s, &err) == PROTOJSON_OK);
	CHECK_STR(s, "t1");
	CHECK(protojson_uint32(m, "keepaliveMs", "keepalive_ms", &u, &err) == PROTOJSON_OK);
	CHECK_NUM(u, 42);
	CHECK(protojson_string(m, "cwd", "cwd", &s, &err) == PROTOJSON_ABSENT);
	CHECK(protojson_string(m, "nope", "nope", &s, &err) == PROTOJSON_ABSENT);
	CHECK(protojson_string(NULL, "tag", "tag", &s, &err) == PROTOJSON_ABSENT); /* an unset message */

	CHECK(protojson_uint32(m, "pid", "pid", &u, &err) == PROTOJSON_OK);
	CHECK_NUM(u, 7);
	CHECK(protojson_bool(m, "stdin", "stdin", &b, &err) == PROTOJSON_OK);
	CHECK(!b);
	CHECK(protojson_message(m, "process", "process", &item, &err) == PROTOJSON_OK);
	CHECK(protojson_uint32(item, "pid", "pid", &u, &err) == PROTOJSON_OK && u == 3);
	CHECK(protojson_string_list(m, "args", "args", &item, &err) == PROTOJSON_OK);
	CHECK_NUM(cJSON_GetArraySize(item), 2);
	CHECK(protojson_string_map(m, "envs", "envs", &item, &err) == PROTOJSON_OK);
	CHECK_STR(cJSON_GetObjectItem(item, "A")->valuestring, "1");

	uint8_t *bytes = NULL;
	size_t len = 0;
	CHECK(protojson_bytes(m, "data", "data", &bytes, &len, &err) ==
		PROTOJSON_OK); /* URL-safe, unpadded */
	CHECK(len == 4 && memcmp(bytes, "hi>\xff", 4) == 0);
	free(bytes);

	CHECK(protojson_enum(m, "signal", "signal", signals, 3, &e, &err) == PROTOJSON_OK);
	CHECK_NUM(e, 9);
	CHECK(protojson_enum(m, "code", "code", signals, 3, &e, &err) == PROTOJSON_OK); /* numbers too */
	CHECK_NUM(e, 15);

	/* each wrong value is invalid_argument naming the field (its JSON name) */
#define BAD(call, text) \
	do { \
		memset(&err, 0, sizeof err); \
		CHECK((call) == PROTOJSON_BAD); \
		CHECK(err.status == CONNECT_INVALID_ARGUMENT); \
		CHECK_STR(err.msg, "unmarshal message: invalid value for " text); \
	} while (0)
	BAD(protojson_uint32(m, "badUint", "bad_uint", &u, &err), "uint32 field badUint");
	BAD(protojson_uint32(m, "frac", "frac", &u, &err), "uint32 field frac");
	BAD(protojson_uint32(m, "big", "big", &u, &err), "uint32 field big");
	BAD(protojson_string(m, "strNum", "str_num", &s, &err), "string field strNum");
	BAD(protojson_bool(m, "tag", "tag", &b, &err), "bool field tag");
	BAD(protojson_message(m, "tag", "tag", &item, &err), "message field tag");
	BAD(protojson_string_list(m, "argsBad", "args_bad", &item, &err), "repeated string field argsBad");
	BAD(protojson_string_map(m, "envsBad", "envs_bad", &item, &err), "map<string,string> field envsBad");
	BAD(protojson_bytes(m, "dataBad", "data_bad", &bytes, &len, &err), "bytes field dataBad");
	BAD(protojson_enum(m, "signalBad", "signal_bad", signals, 3, &e, &err), "enum field signalBad");
#undef BAD
	cJSON_Delete(m);
}
