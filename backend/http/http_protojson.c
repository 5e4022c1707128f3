/* Typed field access for protobuf-JSON request messages. */
#include "http/http_protojson.h"

#include "http/http_connect.h"
#include "lib/base64.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

const cJSON *protojson_member(const cJSON *obj, const char *json_name, const char *proto_name)
{
	if (!obj)
		return NULL;
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, json_name);
	if ((!item || cJSON_IsNull(item)) && proto_name && strcmp(proto_name, json_name) != 0)
		item = cJSON_GetObjectItemCaseSensitive(obj, proto_name);
	return item && !cJSON_IsNull(item) ? item : NULL;
}

static enum protojson_result bad(struct err *err, const char *type, const char *name)
{
	err_set(err, CONNECT_INVALID_ARGUMENT, "unmarshal message: invalid value for %s field %s", type,
		name);
	return PROTOJSON_BAD;
}

enum protojson_result protojson_message(const cJSON *obj, const char *json_name, const char *proto_name,
	const cJSON **out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (!cJSON_IsObject(item))
		return bad(err, "message", json_name);
	*out = item;
	return PROTOJSON_OK;
}

/* A non-negative integer from a JSON number or a decimal string. */
static bool integer_value(const cJSON *item, double max, double *out)
{
	double v;
	if (cJSON_IsNumber(item)) {
		v = item->valuedouble;
	} else if (cJSON_IsString(item) && item->valuestring[0]) {
		const char *s = item->valuestring;
		v = 0;
		for (; *s; s++) {
			if (*s < '0' || *s > '9' || v > max)
				return false;
			v = v * 10 + (*s - '0');
		}
	} else {
		return false;
	}
	if (!(v >= 0 && v <= max) || (double)(int64_t)v != v)
		return false;
	*out = v;
	return true;
}

enum protojson_result protojson_uint32(const cJSON *obj, const char *json_name, const char *proto_name,
	uint32_t *out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	double v;
	if (!integer_value(item, 4294967295.0, &v))
		return bad(err, "uint32", json_name);
	*out = (uint32_t)v;
	return PROTOJSON_OK;
}

enum protojson_result protojson_bool(const cJSON *obj, const char *json_name, const char *proto_name,
	bool *out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (!cJSON_IsBool(item))
		return bad(err, "bool", json_name);
	*out = cJSON_IsTrue(item);
	return PROTOJSON_OK;
}

enum protojson_result protojson_string(const cJSON *obj, const char *json_name, const char *proto_name,
	const char **out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (!cJSON_IsString(item) || !item->valuestring)
		return bad(err, "string", json_name);
	*out = item->valuestring;
	return PROTOJSON_OK;
}

enum protojson_result protojson_string_list(const cJSON *obj, const char *json_name, const char *proto_name,
	const cJSON **out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (!cJSON_IsArray(item))
		return bad(err, "repeated string", json_name);
	const cJSON *e;
	cJSON_ArrayForEach(e, item) {
		if (!cJSON_IsString(e) || !e->valuestring)
			return bad(err, "repeated string", json_name);
	}
	*out = item;
	return PROTOJSON_OK;
}

enum protojson_result protojson_string_map(const cJSON *obj, const char *json_name, const char *proto_name,
	const cJSON **out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (!cJSON_IsObject(item))
		return bad(err, "map<string,string>", json_name);
	const cJSON *e;
	cJSON_ArrayForEach(e, item) {
		if (!cJSON_IsString(e) || !e->valuestring || !e->string)
			return bad(err, "map<string,string>", json_name);
	}
	*out = item;
	return PROTOJSON_OK;
}

enum protojson_result protojson_bytes(const cJSON *obj, const char *json_name, const char *proto_name,
	uint8_t **out, size_t *len, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (!cJSON_IsString(item) || !item->valuestring ||
		base64_decode(item->valuestring, strlen(item->valuestring), out, len) != 0)
		return bad(err, "bytes", json_name);
	return PROTOJSON_OK;
}

enum protojson_result protojson_enum(const cJSON *obj, const char *json_name, const char *proto_name,
	const struct protojson_enum_value *values, size_t count, int32_t *out, struct err *err)
{
	const cJSON *item = protojson_member(obj, json_name, proto_name);
	if (!item)
		return PROTOJSON_ABSENT;
	if (cJSON_IsString(item) && item->valuestring) {
		for (size_t i = 0; i < count; i++) {
			if (strcmp(values[i].name, item->valuestring) == 0) {
				*out = values[i].number;
				return PROTOJSON_OK;
			}
		}
		return bad(err, "enum", json_name);
	}
	if (cJSON_IsNumber(item)) {
		double v = item->valuedouble;
		if (v >= -2147483648.0 && v <= 2147483647.0 && (double)(int32_t)v == v) {
			*out = (int32_t)v;
			return PROTOJSON_OK;
		}
	}
	return bad(err, "enum", json_name);
}
