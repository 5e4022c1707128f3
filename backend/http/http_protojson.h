/* Reading protobuf-JSON request messages (docs/e2b-protocol-notes.md, "Connect
 * protocol"): a field is found by its lowerCamelCase JSON name or its original
 * proto name, JSON null means "not set", uint32 may be a number or a decimal
 * string, bytes are base64 (standard or URL-safe, padding optional), enums are
 * names or numbers, and unknown fields are ignored (connect-go's JSON codec
 * discards them). Errors are invalid_argument, naming the field. */
#ifndef E2B_BACKEND_PROTOJSON_H
#define E2B_BACKEND_PROTOJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct err;

enum protojson_result {
	PROTOJSON_ABSENT,
	PROTOJSON_OK,
	PROTOJSON_BAD
};

/* obj may be NULL (an unset message): every field is then absent. */
const struct cJSON *protojson_member(const struct cJSON *obj, const char *json_name, const char *proto_name);

enum protojson_result protojson_message(const struct cJSON *obj, const char *json_name,
	const char *proto_name, const struct cJSON **out, struct err *err);
enum protojson_result protojson_uint32(const struct cJSON *obj, const char *json_name, const char *proto_name,
	uint32_t *out, struct err *err);
enum protojson_result protojson_bool(const struct cJSON *obj, const char *json_name, const char *proto_name,
	bool *out, struct err *err);
enum protojson_result protojson_string(const struct cJSON *obj, const char *json_name, const char *proto_name,
	const char **out, struct err *err);
/* repeated string: *out is the (possibly empty) array. */
enum protojson_result protojson_string_list(const struct cJSON *obj, const char *json_name,
	const char *proto_name, const struct cJSON **out, struct err *err);
/* map<string,string>: *out is the object. */
enum protojson_result protojson_string_map(const struct cJSON *obj, const char *json_name,
	const char *proto_name, const struct cJSON **out, struct err *err);
/* bytes: a fresh buffer in *out (caller frees), length in *len. */
enum protojson_result protojson_bytes(const struct cJSON *obj, const char *json_name, const char *proto_name,
	uint8_t **out, size_t *len, struct err *err);

struct protojson_enum_value {
	const char *name;
	int32_t number;
};
/* A name from values, or any int32 number (proto3 enums are open). */
enum protojson_result protojson_enum(const struct cJSON *obj, const char *json_name, const char *proto_name,
	const struct protojson_enum_value *values, size_t count, int32_t *out, struct err *err);

#endif
