/* Reading the typed members of a JSON request body (http_body.h parses it).
 * Every failure is a 400 whose message names the offending field, matching
 * E2B's "Error when parsing request: field ..." answers. */
#ifndef E2B_BACKEND_HTTP_FIELD_H
#define E2B_BACKEND_HTTP_FIELD_H

#include "http/http_body.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

enum field_result {
	FIELD_ABSENT, /* missing or JSON null (Go decodes null as "not set") */
	FIELD_OK,
	FIELD_BAD /* err filled */
};

/* An integer within [min, max]; fractions and other types are rejected. */
enum field_result field_int(const struct cJSON *obj, const char *name, int64_t min, int64_t max, int64_t *out,
	struct err *err);
enum field_result field_bool(const struct cJSON *obj, const char *name, bool *out, struct err *err);
enum field_result field_string(const struct cJSON *obj, const char *name, const char **out, struct err *err);
/* How large a string map may be; sizes are in bytes of UTF-8. */
struct map_limits {
	size_t max_keys;
	size_t max_key_bytes;
	size_t max_value_bytes;
	size_t max_total_bytes; /* every key and value added up */
};

/* An object whose values are all strings (metadata, envVars), within the
 * limits: a 400 naming the field and the limit otherwise. */
enum field_result field_string_map(const struct cJSON *obj, const char *name, const struct map_limits *limits,
	const struct cJSON **out, struct err *err);

#endif
