/* files_entry.c — envd's filesystem answers in EPP terms: EntryInfo → Entry,
 * and envd's filesystem failures → the error table's file kinds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd.h"
#include "errors.h"
#include "files.h"
#include "files_entry.h"

static const cJSON *field(const cJSON *o, const char *camel, const char *snake)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, camel);
	return v ? v : (snake ? cJSON_GetObjectItemCaseSensitive(o, snake) : NULL);
}

/* int64 as protobuf-JSON writes it (a decimal string) or a plain number. */
static double int64_value(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return v->valuedouble >= 0 ? v->valuedouble : 0;
	if (!cJSON_IsString(v))
		return 0;
	double n = 0;
	for (const char *c = v->valuestring; *c; c++) {
		if (*c < '0' || *c > '9')
			return 0;
		n = n * 10 + (*c - '0');
	}
	return n;
}

static const char *type_name(const cJSON *t)
{
	static const char *const names[] = {"other", "file", "dir", "symlink"};
	static const char *const enums[] = {"FILE_TYPE_UNSPECIFIED", "FILE_TYPE_FILE", "FILE_TYPE_DIRECTORY",
		"FILE_TYPE_SYMLINK"};
	if (cJSON_IsNumber(t) && t->valuedouble >= 0 && t->valuedouble <= 3)
		return names[(int)t->valuedouble];
	if (cJSON_IsString(t))
		for (int i = 0; i < 4; i++)
			if (strcmp(t->valuestring, enums[i]) == 0)
				return names[i];
	return "other";
}

static const char *str_or(const cJSON *v, const char *fallback)
{
	return cJSON_IsString(v) ? v->valuestring : fallback;
}

cJSON *e2bw_entry_from_envd(const cJSON *info)
{
	const cJSON *name = field(info, "name", NULL), *path = field(info, "path", NULL);
	if (!cJSON_IsString(name) || !cJSON_IsString(path))
		return NULL;
	const cJSON *mode = field(info, "mode", NULL);
	const cJSON *target = field(info, "symlinkTarget", "symlink_target");
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", name->valuestring);
	cJSON_AddStringToObject(e, "path", path->valuestring);
	cJSON_AddStringToObject(e, "type", type_name(field(info, "type", NULL)));
	cJSON_AddNumberToObject(e, "size", int64_value(field(info, "size", NULL)));
	cJSON_AddNumberToObject(e, "mode",
		cJSON_IsNumber(mode) && mode->valuedouble >= 0
			? (double)((unsigned long)mode->valuedouble & 07777ul)
			: 0);
	cJSON_AddStringToObject(e, "permissions", str_or(field(info, "permissions", NULL), ""));
	cJSON_AddStringToObject(e, "owner", str_or(field(info, "owner", NULL), ""));
	cJSON_AddStringToObject(e, "group", str_or(field(info, "group", NULL), ""));
	cJSON_AddStringToObject(e, "modified_at", str_or(field(info, "modifiedTime", "modified_time"), ""));
	if (cJSON_IsString(target))
		cJSON_AddStringToObject(e, "symlink_target", target->valuestring);
	return e;
}

/* --- errors ------------------------------------------------------------------ */

static int contains(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = haystack; *p; p++) {
		size_t i = 0;
		while (i < n && p[i] && (p[i] | 0x20) == (needle[i] | 0x20))
			i++;
		if (i == n)
			return 1;
	}
	return 0;
}

/* envd words its filesystem failures in Go's os error texts (its handlers
 * return most of them as `internal` / HTTP 500), so the text is what tells
 * them apart. Order matters: the first match wins. */
static const struct {
	const char *text;
	e2bw_error_kind kind;
} by_text[] = {
	{"no space left", E2BW_ERR_NO_SPACE},
	{"not enough disk space", E2BW_ERR_NO_SPACE},
	{"no such file", E2BW_ERR_NOT_FOUND},
	{"does not exist", E2BW_ERR_NOT_FOUND},
	{"not found", E2BW_ERR_NOT_FOUND},
	{"is not a directory", E2BW_ERR_NOT_DIRECTORY},
	{"not a directory", E2BW_ERR_NOT_DIRECTORY},
	{"is a directory", E2BW_ERR_IS_DIRECTORY},
	{"permission denied", E2BW_ERR_PERMISSION_DENIED},
	{"operation not permitted", E2BW_ERR_PERMISSION_DENIED},
	{"file exists", E2BW_ERR_ALREADY_EXISTS},
	{"already exists", E2BW_ERR_ALREADY_EXISTS},
	{"directory not empty", E2BW_ERR_ALREADY_EXISTS},
};

static int kind_by_text(const char *message)
{
	for (size_t i = 0; i < sizeof by_text / sizeof by_text[0]; i++)
		if (contains(message, by_text[i].text))
			return (int)by_text[i].kind;
	return -1;
}

static cJSON *file_error(e2bw_error_kind kind, const char *message, const char *path)
{
	static const char *const what[] = {"is missing", "is a directory",
		"is not a directory (or a parent of it is a file)", "cannot be accessed: permission denied",
		"cannot be written: no space left in the sandbox", "already exists"};
	int i = kind == E2BW_ERR_NOT_FOUND           ? 0
		: kind == E2BW_ERR_IS_DIRECTORY      ? 1
		: kind == E2BW_ERR_NOT_DIRECTORY     ? 2
		: kind == E2BW_ERR_PERMISSION_DENIED ? 3
		: kind == E2BW_ERR_NO_SPACE          ? 4
						     : 5;
	cJSON *e =
		e2bw_error_new(kind, "Path '%.300s' %s (envd: %.200s)", path ? path : "", what[i], message);
	if (kind == E2BW_ERR_NOT_FOUND)
		e2bw_error_set_str(e, "sdk_code", E2BW_SDK_IN_SANDBOX_NOT_FOUND);
	return e2bw_error_set_str(e, "path", path);
}

cJSON *e2bw_files_error_text(const char *message, const char *path, int fallback_kind)
{
	int kind = kind_by_text(message);
	if (kind >= 0)
		return file_error((e2bw_error_kind)kind, message, path);
	return e2bw_error_set_str(e2bw_error_new((e2bw_error_kind)fallback_kind, "%.500s", message), "path",
		path);
}

cJSON *e2bw_files_error(const e2bw_http_op *op, const char *sandbox_id, const char *path)
{
	if (op->status == 502)
		return e2bw_envd_status_error(op, sandbox_id); /* the sandbox is gone */
	cJSON *body = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(body, "code");
	const cJSON *message = cJSON_GetObjectItemCaseSensitive(body, "message");
	const char *c = cJSON_IsString(code) ? code->valuestring : "";
	char text[400];
	if (cJSON_IsString(message))
		snprintf(text, sizeof text, "%s", message->valuestring);
	else if (!body && op->body.len)
		snprintf(text, sizeof text, "%.*s", (int)(op->body.len < 300 ? op->body.len : 300),
			op->body.data);
	else
		snprintf(text, sizeof text, "HTTP %d", op->status);
	for (char *t = text; *t; t++)
		if ((unsigned char)*t < 0x20)
			*t = ' ';

	int kind = -1;
	if (op->status == 507)
		kind = E2BW_ERR_NO_SPACE;
	else if (!strcmp(c, "not_found") || op->status == 404)
		kind = E2BW_ERR_NOT_FOUND;
	else if (!strcmp(c, "already_exists"))
		kind = E2BW_ERR_ALREADY_EXISTS;
	else if (!strcmp(c, "unauthenticated") || !strcmp(c, "unavailable") ||
		!strcmp(c, "deadline_exceeded") || !strcmp(c, "canceled") || op->status == 401 ||
		op->status == 429 || op->status == 503 || op->status == 504)
		kind = -1; /* not about the path: the general envd mapping */
	else if (!strcmp(c, "permission_denied") || op->status == 403)
		kind = E2BW_ERR_PERMISSION_DENIED;
	else
		kind = kind_by_text(text);

	cJSON *e;
	if (kind >= 0) {
		e = file_error((e2bw_error_kind)kind, text, path);
		if (c[0])
			e2bw_error_set_str(e, "backend_code", c);
		e2bw_error_set_num(e, "http_status", op->status);
	} else {
		e = e2bw_envd_status_error(op, sandbox_id);
		e2bw_error_set_str(e, "path", path);
	}
	cJSON_Delete(body);
	return e;
}
