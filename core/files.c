/* files.c — files.read / write / list / stat / mkdir / remove / move / search
 * over envd: GET and POST /files (docs/e2b-protocol-notes.md, "Files") for
 * content, the filesystem.Filesystem RPCs ("Filesystem service") for the rest.
 * docs/files.md has the contract; entries and errors are mapped in
 * files_entry.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "envd.h"
#include "errors.h"
#include "files.h"
#include "files_entry.h"
#include "json_text.h"
#include "jsonrpc.h"
#include "url.h"

#define USER_AGENT "e2b-wasm/" E2BW_VERSION
/* An error answer is kept up to this size for its message. */
#define ERROR_BODY_MAX (64u * 1024u)

const char *e2bw_files_user(const e2bw_call *call)
{
	return e2bw_call_param_str(call, "user");
}

static double param_num(const e2bw_call *call, const char *name, double fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(call->params, name);
	return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

/* --- unary filesystem RPCs (sent with e2bw_envd_unary) --------------------------- */

cJSON *e2bw_fs_answer(e2bw_core *core, e2bw_http_op *op, const char *path)
{
	e2bw_call *call = op->call;
	cJSON *error = NULL, *json = NULL;
	if (op->status != 200) {
		error = e2bw_files_error(op, e2bw_call_param_str(call, "sandbox_id"), path);
	} else {
		json = op->body.len ? cJSON_ParseWithLength(op->body.data, op->body.len) : NULL;
		if (!cJSON_IsObject(json))
			error = e2bw_error_new(E2BW_ERR_BAD_RESPONSE,
				"envd sent an invalid answer to %s: expected a JSON object", op->what);
	}
	e2bw_http_op_finish(core, op);
	if (error) {
		cJSON_Delete(json);
		e2bw_call_fail(core, call, error);
		return NULL;
	}
	return json;
}

static cJSON *path_message(const char *path)
{
	cJSON *m = cJSON_CreateObject();
	if (m && !cJSON_AddStringToObject(m, "path", path)) {
		cJSON_Delete(m);
		return NULL;
	}
	return m;
}

/* Answers with the Entry in answer.entry (Stat, MakeDir, Move). */
static void answer_entry(e2bw_core *core, e2bw_call *call, cJSON *answer, cJSON *wrap_created)
{
	cJSON *entry = e2bw_entry_from_envd(cJSON_GetObjectItemCaseSensitive(answer, "entry"));
	cJSON_Delete(answer);
	if (!entry) {
		cJSON_Delete(wrap_created);
		e2bw_call_fail(core, call,
			e2bw_error_new(E2BW_ERR_BAD_RESPONSE, "envd's answer has no valid entry"));
		return;
	}
	if (wrap_created) {
		cJSON_AddItemToObject(wrap_created, "entry", entry);
		entry = wrap_created;
	}
	e2bw_call_succeed(core, call, entry);
}

static void stat_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(call->scratch, "stat_path"));
	cJSON *answer = e2bw_fs_answer(core, op, path ? path : e2bw_call_param_str(call, "path"));
	if (answer)
		answer_entry(core, call, answer, NULL);
}

void e2bw_files_answer_stat(e2bw_core *core, e2bw_call *call, const char *path)
{
	if (!call->scratch)
		call->scratch = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(call->scratch, "stat_path");
	cJSON_AddStringToObject(call->scratch, "stat_path", path);
	e2bw_envd_unary(core, call, "filesystem.Filesystem/Stat", path_message(path), e2bw_files_user(call),
		stat_done);
}

/* files.stat */
static void stat_go(e2bw_core *core, e2bw_call *call)
{
	e2bw_files_answer_stat(core, call, e2bw_call_param_str(call, "path"));
}
void e2bw_files_stat(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, stat_go);
}

/* files.list */
static void list_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *answer = e2bw_fs_answer(core, op, e2bw_call_param_str(call, "path"));
	if (!answer)
		return;
	cJSON *r = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(r, "entries");
	const cJSON *info;
	cJSON_ArrayForEach(info, cJSON_GetObjectItemCaseSensitive(answer, "entries")) {
		cJSON *entry = e2bw_entry_from_envd(info);
		if (entry)
			cJSON_AddItemToArray(list, entry);
	}
	cJSON_Delete(answer);
	e2bw_call_succeed(core, call, r);
}

static cJSON *list_message(const char *path, double depth)
{
	cJSON *m = path_message(path);
	cJSON_AddNumberToObject(m, "depth", depth);
	return m;
}

static void list_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *m = list_message(e2bw_call_param_str(call, "path"), param_num(call, "depth", 1));
	e2bw_envd_unary(core, call, "filesystem.Filesystem/ListDir", m, e2bw_files_user(call), list_done);
}
void e2bw_files_list(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, list_go);
}

/* files.search: ListDir to a bounded depth, names filtered here. */
#define SEARCH_DEFAULT_DEPTH 8
#define SEARCH_DEFAULT_LIMIT 1000

static void search_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *answer = e2bw_fs_answer(core, op, e2bw_call_param_str(call, "path"));
	if (!answer)
		return;
	const char *pattern = e2bw_call_param_str(call, "pattern");
	double limit = param_num(call, "limit", SEARCH_DEFAULT_LIMIT);
	cJSON *r = cJSON_CreateObject();
	cJSON *list = cJSON_AddArrayToObject(r, "entries");
	int found = 0, truncated = 0;
	const cJSON *info;
	cJSON_ArrayForEach(info, cJSON_GetObjectItemCaseSensitive(answer, "entries")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(info, "name");
		if (!cJSON_IsString(name) || !e2bw_glob_match(pattern, name->valuestring))
			continue;
		if (found >= limit) {
			truncated = 1;
			break;
		}
		cJSON *entry = e2bw_entry_from_envd(info);
		if (!entry)
			continue;
		cJSON_AddItemToArray(list, entry);
		found++;
	}
	cJSON_AddBoolToObject(r, "truncated", truncated);
	cJSON_Delete(answer);
	e2bw_call_succeed(core, call, r);
}

static void search_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *m = list_message(e2bw_call_param_str(call, "path"),
		param_num(call, "depth", SEARCH_DEFAULT_DEPTH));
	e2bw_envd_unary(core, call, "filesystem.Filesystem/ListDir", m, e2bw_files_user(call), search_done);
}
void e2bw_files_search(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, search_go);
}

int e2bw_glob_match(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;
	while (*s) {
		if (*p == '*') {
			star_p = ++p;
			star_s = s;
			continue;
		}
		int ok = 0;
		const char *next = p + 1;
		if (*p == '?') {
			ok = 1;
		} else if (*p == '[') {
			const char *q = p + 1;
			int negate = *q == '!' || *q == '^';
			if (negate)
				q++;
			int in = 0;
			const char *first = q;
			while (*q && (*q != ']' || q == first)) {
				char lo = *q, hi = *q;
				if (q[1] == '-' && q[2] && q[2] != ']') {
					hi = q[2];
					q += 2;
				}
				if ((unsigned char)*s >= (unsigned char)lo &&
					(unsigned char)*s <= (unsigned char)hi)
					in = 1;
				q++;
			}
			if (*q == ']') {
				ok = in != negate;
				next = q + 1;
			} else {
				ok = *s == '['; /* an unclosed bracket is a literal */
			}
		} else if (*p == '\\' && p[1]) {
			ok = p[1] == *s;
			next = p + 2;
		} else {
			ok = *p && *p == *s;
		}
		if (ok) {
			p = next;
			s++;
		} else if (star_p) {
			p = star_p;
			s = ++star_s;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* files.mkdir: MakeDir; an existing directory is {created:false}. */
static void mkdir_stat_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *path = e2bw_call_param_str(call, "path");
	cJSON *answer = e2bw_fs_answer(core, op, path);
	if (!answer)
		return;
	cJSON *entry = e2bw_entry_from_envd(cJSON_GetObjectItemCaseSensitive(answer, "entry"));
	cJSON_Delete(answer);
	if (!entry ||
		strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "type")), "dir") != 0) {
		cJSON_Delete(entry);
		cJSON *e = e2bw_error_new(E2BW_ERR_ALREADY_EXISTS,
			"Path '%.300s' already exists and is not a directory", path);
		e2bw_call_fail(core, call, e2bw_error_set_str(e, "path", path));
		return;
	}
	cJSON *r = cJSON_CreateObject();
	cJSON_AddBoolToObject(r, "created", 0);
	cJSON_AddItemToObject(r, "entry", entry);
	e2bw_call_succeed(core, call, r);
}

static void mkdir_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	const char *path = e2bw_call_param_str(call, "path");
	if (op->status != 200) {
		cJSON *e = e2bw_files_error(op, e2bw_call_param_str(call, "sandbox_id"), path);
		const cJSON *data = cJSON_GetObjectItemCaseSensitive(e, "data");
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "kind"));
		const char *code =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "backend_code"));
		/* envd: already_exists for a directory, invalid_argument for a file */
		if ((kind && !strcmp(kind, "already_exists")) ||
			(code && (!strcmp(code, "already_exists") || !strcmp(code, "invalid_argument")))) {
			/* exists: a directory is success, anything else stays an error */
			cJSON_Delete(e);
			e2bw_http_op_finish(core, op);
			e2bw_envd_unary(core, call, "filesystem.Filesystem/Stat", path_message(path),
				e2bw_files_user(call), mkdir_stat_done);
			return;
		}
		e2bw_http_op_finish(core, op);
		e2bw_call_fail(core, call, e);
		return;
	}
	cJSON *answer = e2bw_fs_answer(core, op, path);
	if (!answer)
		return;
	cJSON *r = cJSON_CreateObject();
	cJSON_AddBoolToObject(r, "created", 1);
	answer_entry(core, call, answer, r);
}

static void mkdir_go(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_unary(core, call, "filesystem.Filesystem/MakeDir",
		path_message(e2bw_call_param_str(call, "path")), e2bw_files_user(call), mkdir_done);
}
void e2bw_files_mkdir(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, mkdir_go);
}

/* files.remove */
static void remove_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *answer = e2bw_fs_answer(core, op, e2bw_call_param_str(call, "path"));
	if (!answer)
		return;
	cJSON_Delete(answer);
	e2bw_call_succeed(core, call, cJSON_CreateObject());
}

static void remove_go(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_unary(core, call, "filesystem.Filesystem/Remove",
		path_message(e2bw_call_param_str(call, "path")), e2bw_files_user(call), remove_done);
}
void e2bw_files_remove(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, remove_go);
}

/* files.move */
static void move_done(e2bw_core *core, e2bw_http_op *op)
{
	e2bw_call *call = op->call;
	cJSON *answer = e2bw_fs_answer(core, op, e2bw_call_param_str(call, "source"));
	if (answer)
		answer_entry(core, call, answer, NULL);
}

static void move_go(e2bw_core *core, e2bw_call *call)
{
	cJSON *m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "source", e2bw_call_param_str(call, "source"));
	cJSON_AddStringToObject(m, "destination", e2bw_call_param_str(call, "destination"));
	e2bw_envd_unary(core, call, "filesystem.Filesystem/Move", m, e2bw_files_user(call), move_done);
}
void e2bw_files_move(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, move_go);
}
