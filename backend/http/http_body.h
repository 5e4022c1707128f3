/* Reading a JSON request body and its typed fields. Every failure becomes a
 * 400 whose message names the offending field, matching E2B's
 * "Error when parsing request: ..." answers. */
#ifndef E2B_BACKEND_REQUEST_BODY_H
#define E2B_BACKEND_REQUEST_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;
struct evhttp_request;

struct body_error {
	int status;
	char message[200];
};

enum body_need { BODY_REQUIRED, BODY_OPTIONAL };

/* The body as a JSON object. An empty body is {} when optional and a 400
 * when required. Non-JSON, trailing garbage, a non-object or a string with
 * \u0000 anywhere (cJSON would cut it at the NUL) is a 400.
 * NULL on failure with err filled; the caller deletes the result. */
struct cJSON *body_parse_object(struct evhttp_request *req, enum body_need need,
	struct body_error *err);

enum field_result {
	FIELD_ABSENT, /* missing or JSON null (Go decodes null as "not set") */
	FIELD_OK,
	FIELD_BAD     /* err filled */
};

/* An integer within [min, max]; fractions and other types are rejected. */
enum field_result field_int(const struct cJSON *obj, const char *name, int64_t min, int64_t max,
	int64_t *out, struct body_error *err);
enum field_result field_bool(const struct cJSON *obj, const char *name, bool *out,
	struct body_error *err);
enum field_result field_string(const struct cJSON *obj, const char *name, const char **out,
	struct body_error *err);
/* How large a string map may be; sizes are in bytes of UTF-8. */
struct map_limits {
	size_t max_keys;
	size_t max_key_bytes;
	size_t max_value_bytes;
	size_t max_total_bytes; /* every key and value added up */
};

/* An object whose values are all strings (metadata, envVars), within the
 * limits: a 400 naming the field and the limit otherwise. */
enum field_result field_string_map(const struct cJSON *obj, const char *name,
	const struct map_limits *limits, const struct cJSON **out, struct body_error *err);

/* Fills err with a 400 and "Error when parsing request: <message>". */
void body_error_set(struct body_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
