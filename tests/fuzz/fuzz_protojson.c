/* libFuzzer target: the backend's protobuf-JSON readers
 * (backend/http/http_protojson.c), which read every envd request message a
 * client sends (Start, SendInput, the filesystem RPCs). Any text as a
 * message: no crash or leak; a field is absent exactly when it is missing or
 * null; a refusal is invalid_argument and names the field; what is read is
 * well-formed (a string, a list of strings, a map of strings, bytes of the
 * length said, an enum value from the list or any number). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "http/http_connect.h"
#include "http/http_protojson.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct protojson_enum_value signals[] = {{"SIGNAL_UNSPECIFIED", 0}, {"SIGNAL_SIGTERM", 15},
	{"SIGNAL_SIGKILL", 9}};

/* The verdict's shape, for any reader: absent iff missing or null; a
 * refusal names the field. */
static void check(enum protojson_result r, const cJSON *obj, const char *json, const char *proto,
	const struct err *err)
{
	const cJSON *m = protojson_member(obj, json, proto);
	REQUIRE((r == PROTOJSON_ABSENT) == (!m || cJSON_IsNull(m)), "%s: absent %d but member %p", json,
		r == PROTOJSON_ABSENT, (const void *)m);
	if (r == PROTOJSON_BAD) {
		REQUIRE(err->status == CONNECT_INVALID_ARGUMENT, "%s: refused with code %d", json,
			(int)err->status);
		REQUIRE(strstr(err->msg, json) || strstr(err->msg, proto),
			"%s: the refusal \"%s\" names no field", json, err->msg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	if (!obj)
		return 0;
	struct err err;
	enum protojson_result r;

	const cJSON *msg = NULL;
	memset(&err, 0, sizeof err);
	r = protojson_message(obj, "process", "process", &msg, &err);
	check(r, obj, "process", "process", &err);
	if (r == PROTOJSON_OK)
		REQUIRE(cJSON_IsObject(msg), "a message that is not an object");

	uint32_t u = 0;
	memset(&err, 0, sizeof err);
	r = protojson_uint32(obj, "pid", "pid", &u, &err);
	check(r, obj, "pid", "pid", &err);

	bool b = false;
	memset(&err, 0, sizeof err);
	r = protojson_bool(obj, "stdin", "stdin", &b, &err);
	check(r, obj, "stdin", "stdin", &err);

	const char *s = NULL;
	memset(&err, 0, sizeof err);
	r = protojson_string(obj, "cwd", "cwd", &s, &err);
	check(r, obj, "cwd", "cwd", &err);
	if (r == PROTOJSON_OK)
		REQUIRE(s != NULL, "a string read as NULL");

	const cJSON *list = NULL;
	memset(&err, 0, sizeof err);
	r = protojson_string_list(obj, "args", "args", &list, &err);
	check(r, obj, "args", "args", &err);
	if (r == PROTOJSON_OK) {
		const cJSON *e;
		cJSON_ArrayForEach(e, list)
			REQUIRE(cJSON_IsString(e), "a list of strings holding something else");
	}

	const cJSON *map = NULL;
	memset(&err, 0, sizeof err);
	r = protojson_string_map(obj, "envs", "envs", &map, &err);
	check(r, obj, "envs", "envs", &err);
	if (r == PROTOJSON_OK) {
		const cJSON *e;
		cJSON_ArrayForEach(e, map)
			REQUIRE(cJSON_IsString(e) && e->string, "a map of strings holding something else");
	}

	uint8_t *bytes = NULL;
	size_t len = 12345;
	memset(&err, 0, sizeof err);
	r = protojson_bytes(obj, "stdinData", "stdin_data", &bytes, &len, &err);
	check(r, obj, "stdinData", "stdin_data", &err);
	if (r == PROTOJSON_OK) {
		REQUIRE(bytes != NULL || len == 0, "bytes without a buffer");
		const char *text = cJSON_GetStringValue(protojson_member(obj, "stdinData", "stdin_data"));
		REQUIRE(text && len <= strlen(text), "%zu bytes from %zu characters of base64", len,
			text ? strlen(text) : 0);
	}
	free(bytes);

	int32_t sig = -1;
	memset(&err, 0, sizeof err);
	r = protojson_enum(obj, "signal", "signal", signals, sizeof signals / sizeof signals[0], &sig, &err);
	check(r, obj, "signal", "signal", &err);
	if (r == PROTOJSON_OK && cJSON_IsString(protojson_member(obj, "signal", "signal"))) {
		bool named = false;
		for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
			named |= signals[i].number == sig;
		REQUIRE(named, "a name read as %d, not a listed value", (int)sig);
	}
	cJSON_Delete(obj);
	return 0;
}
