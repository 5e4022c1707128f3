#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MESSAGE_MAX 600 /* long enough for a path and a backend message */

static const struct {
	int code;
	const char *name;
	const char *sdk_code;
} error_table[E2BW_ERR__COUNT] = {
#define E2BW_X(kind, code, name, sdk) {code, name, sdk},
	E2BW_ERROR_TABLE(E2BW_X)
#undef E2BW_X
};

int e2bw_error_code(e2bw_error_kind kind)
{
	return error_table[kind].code;
}
const char *e2bw_error_name(e2bw_error_kind kind)
{
	return error_table[kind].name;
}

/* Backend text and truncation ("%.200s") can put bytes that are not UTF-8
 * into a message; JSON must be UTF-8, and the redaction scan reads the text
 * by characters. Every byte that does not belong to a well-formed sequence
 * becomes '?', in place. */
static void utf8_repair(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		unsigned c = p[0];
		size_t n = c < 0x80              ? 1
			: c >= 0xC2 && c <= 0xDF ? 2
			: c >= 0xE0 && c <= 0xEF ? 3
			: c >= 0xF0 && c <= 0xF4 ? 4
						 : 0;
		size_t k = 1;
		while (k < n && (p[k] & 0xC0) == 0x80)
			k++;
		/* overlong 3/4-byte forms, surrogates, and beyond U+10FFFF */
		int bad = n == 0 || k < n || (c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) ||
			(c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] > 0x8F);
		if (bad) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

cJSON *e2bw_error_new(e2bw_error_kind kind, const char *fmt, ...)
{
	char message[MESSAGE_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	if (n < 0)
		message[0] = '\0';
	else if ((size_t)n >= sizeof message)
		memcpy(message + sizeof message - 4, "...", 4);
	utf8_repair(message);

	cJSON *error = cJSON_CreateObject();
	cJSON *data = cJSON_CreateObject();
	if (!error || !data || !cJSON_AddNumberToObject(error, "code", error_table[kind].code) ||
		!cJSON_AddStringToObject(error, "message", message) ||
		!cJSON_AddStringToObject(data, "kind", error_table[kind].name) ||
		(error_table[kind].sdk_code &&
			!cJSON_AddStringToObject(data, "sdk_code", error_table[kind].sdk_code))) {
		cJSON_Delete(error);
		cJSON_Delete(data);
		return NULL;
	}
	if (!cJSON_AddItemToObject(error, "data", data)) {
		cJSON_Delete(error);
		cJSON_Delete(data);
		return NULL;
	}
	return error;
}

/* Puts item at data.<key>, replacing what was there; takes item. */
static cJSON *set_data(cJSON *error, const char *key, cJSON *item)
{
	cJSON *data = error ? cJSON_GetObjectItemCaseSensitive(error, "data") : NULL;
	int ok = data && item &&
		(cJSON_HasObjectItem(data, key) ? cJSON_ReplaceItemInObjectCaseSensitive(data, key, item)
						: cJSON_AddItemToObject(data, key, item));
	if (!ok)
		cJSON_Delete(item);
	return error;
}

cJSON *e2bw_error_set_str(cJSON *error, const char *key, const char *value)
{
	if (!value)
		return error;
	cJSON *item = cJSON_CreateString(value);
	if (item)
		utf8_repair(item->valuestring);
	return set_data(error, key, item);
}

cJSON *e2bw_error_set_num(cJSON *error, const char *key, double value)
{
	return set_data(error, key, cJSON_CreateNumber(value));
}

e2bw_error_kind e2bw_error_kind_for_status(int status)
{
	switch (status) {
	case 400:
		return E2BW_ERR_INVALID_ARGUMENT;
	case 401:
		return E2BW_ERR_UNAUTHENTICATED;
	case 403:
		return E2BW_ERR_PERMISSION_DENIED;
	case 404:
		return E2BW_ERR_NOT_FOUND;
	case 409:
		return E2BW_ERR_CONFLICT;
	case 429:
		return E2BW_ERR_RATE_LIMITED;
	case 502:
	case 503:
		return E2BW_ERR_UNAVAILABLE;
	case 504:
		return E2BW_ERR_TIMEOUT;
	default:
		return E2BW_ERR_BACKEND;
	}
}
