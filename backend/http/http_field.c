/* Reading the typed members of a JSON request body (http_field.h). */
#include "http/http_field.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The member, or NULL when missing or null. Names are case-sensitive. */
static const cJSON *member(const cJSON *obj, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
	return item && !cJSON_IsNull(item) ? item : NULL;
}

enum field_result field_int(const cJSON *obj, const char *name, int64_t min, int64_t max, int64_t *out,
	struct err *err)
{
	const cJSON *item = member(obj, name);
	if (!item)
		return FIELD_ABSENT;
	if (!cJSON_IsNumber(item)) {
		body_error_set(err, "field \"%s\" must be an integer", name);
		return FIELD_BAD;
	}
	double v = item->valuedouble;
	/* Range first: it also keeps the cast below defined. */
	if (!(v >= (double)min && v <= (double)max)) {
		body_error_set(err, "field \"%s\" must be between %lld and %lld", name, (long long)min,
			(long long)max);
		return FIELD_BAD;
	}
	if ((double)(int64_t)v != v) {
		body_error_set(err, "field \"%s\" must be an integer", name);
		return FIELD_BAD;
	}
	*out = (int64_t)v;
	return FIELD_OK;
}

enum field_result field_bool(const cJSON *obj, const char *name, bool *out, struct err *err)
{
	const cJSON *item = member(obj, name);
	if (!item)
		return FIELD_ABSENT;
	if (!cJSON_IsBool(item)) {
		body_error_set(err, "field \"%s\" must be a boolean", name);
		return FIELD_BAD;
	}
	*out = cJSON_IsTrue(item);
	return FIELD_OK;
}

enum field_result field_string(const cJSON *obj, const char *name, const char **out, struct err *err)
{
	const cJSON *item = member(obj, name);
	if (!item)
		return FIELD_ABSENT;
	if (!cJSON_IsString(item) || !item->valuestring) {
		body_error_set(err, "field \"%s\" must be a string", name);
		return FIELD_BAD;
	}
	*out = item->valuestring;
	return FIELD_OK;
}

enum field_result field_string_map(const cJSON *obj, const char *name, const struct map_limits *limits,
	const cJSON **out, struct err *err)
{
	const cJSON *item = member(obj, name);
	if (!item)
		return FIELD_ABSENT;
	if (!cJSON_IsObject(item)) {
		body_error_set(err, "field \"%s\" must be an object of strings", name);
		return FIELD_BAD;
	}
	const cJSON *entry;
	size_t keys = 0, total = 0;
	cJSON_ArrayForEach(entry, item) {
		if (!cJSON_IsString(entry) || !entry->valuestring) {
			body_error_set(err, "field \"%s\" must be an object of strings", name);
			return FIELD_BAD;
		}
		size_t klen = strlen(entry->string), vlen = strlen(entry->valuestring);
		total += klen + vlen;
		if (++keys > limits->max_keys) {
			body_error_set(err, "field \"%s\" may have at most %zu keys", name, limits->max_keys);
			return FIELD_BAD;
		}
		if (klen == 0 || klen > limits->max_key_bytes) {
			body_error_set(err, "field \"%s\": keys must be 1 to %zu bytes", name,
				limits->max_key_bytes);
			return FIELD_BAD;
		}
		if (vlen > limits->max_value_bytes) {
			body_error_set(err, "field \"%s\": values may be at most %zu bytes", name,
				limits->max_value_bytes);
			return FIELD_BAD;
		}
		if (total > limits->max_total_bytes) {
			body_error_set(err, "field \"%s\" may total at most %zu bytes", name,
				limits->max_total_bytes);
			return FIELD_BAD;
		}
	}
	*out = item;
	return FIELD_OK;
}
