/* Reading a JSON request body and its typed fields. */
#include "http/http_body.h"

#include "lib/text.h"

#include <cJSON.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void body_error_set(struct body_error *err, const char *fmt, ...)
{
	static const char prefix[] = "Error when parsing request: ";
	err->status = 400;
	memcpy(err->message, prefix, sizeof prefix);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message + sizeof prefix - 1, sizeof err->message - (sizeof prefix - 1), fmt, ap);
	va_end(ap);
}

static bool only_whitespace(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return false;
	return true;
}

cJSON *body_parse_object(struct evhttp_request *req, enum body_need need, struct body_error *err)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	/* evhttp_set_max_body_size already capped len (413 above it). */
	const char *text = len ? (const char *)evbuffer_pullup(in, -1) : "";
	if (len && !text) {
		err->status = 500;
		snprintf(err->message, sizeof err->message, "out of memory");
		return NULL;
	}
	if (only_whitespace(text, text + len)) {
		if (need == BODY_OPTIONAL)
			return cJSON_CreateObject();
		body_error_set(err, "request body is required");
		return NULL;
	}
	if (text_json_has_nul_escape(text, len)) {
		body_error_set(err, "strings must not contain NUL (\\u0000)");
		return NULL;
	}
	/* Go's encoding/json turns invalid UTF-8 in strings into U+FFFD; so do
	 * we, before cJSON keeps the raw bytes and we echo them. */
	char *fixed = NULL;
	if (!text_utf8_valid(text, len)) {
		fixed = text_utf8_replace_invalid(text, len, &len);
		if (!fixed) {
			err->status = 500;
			snprintf(err->message, sizeof err->message, "out of memory");
			return NULL;
		}
		text = fixed;
	}
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	bool trailing = !root || !end || !only_whitespace(end, text + len);
	free(fixed);
	if (trailing) {
		cJSON_Delete(root);
		body_error_set(err, "request body is not valid JSON");
		return NULL;
	}
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		body_error_set(err, "request body must be a JSON object");
		return NULL;
	}
	return root;
}

/* The member, or NULL when missing or null. Names are case-sensitive. */
static const cJSON *member(const cJSON *obj, const char *name)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
	return item && !cJSON_IsNull(item) ? item : NULL;
}

enum field_result field_int(const cJSON *obj, const char *name, int64_t min, int64_t max,
	int64_t *out, struct body_error *err)
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

enum field_result field_bool(const cJSON *obj, const char *name, bool *out, struct body_error *err)
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

enum field_result field_string(const cJSON *obj, const char *name, const char **out,
	struct body_error *err)
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

enum field_result field_string_map(const cJSON *obj, const char *name,
	const struct map_limits *limits, const cJSON **out, struct body_error *err)
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
