/* files_chmod.c — files.chmod, and the mode/owner/group of files.write.
 *
 * envd has no chmod or chown RPC, so the core runs one fixed program as
 * root through process.Process/Start (the same stream engine as exec.run):
 *   /bin/sh -c '<constant script>' e2bw-chmod <mode> <owner[:group]> <path>
 * Everything the caller chose travels as its own argv entry, never inside
 * the script text, so no path or name is ever interpreted by a shell. The
 * Entry answered is envd's Stat of the path afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "envd.h"
#include "errors.h"
#include "files.h"
#include "files_chmod.h"
#include "files_entry.h"
#include "stream.h"
#include "stream_open.h"

/* chown first: changing the owner may clear setuid/setgid bits, which the
 * chmod after it sets again when asked. */
#define CHMOD_SCRIPT \
	"[ -z \"$2\" ] || chown -- \"$2\" \"$3\" || exit $?; [ -z \"$1\" ] || chmod -- \"$1\" \"$3\""
#define CHMOD_TIMEOUT_S 60.0

static void chmod_done(e2bw_core *core, e2bw_call *call, cJSON *result)
{
	const char *path = e2bw_call_param_str(call, "path");
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(result, "exit_code");
	/* exec.run's result carries output as raw JSON text (written from bytes) */
	const cJSON *raw = cJSON_GetObjectItemCaseSensitive(result, "stderr");
	cJSON *parsed = cJSON_IsRaw(raw) ? cJSON_Parse(raw->valuestring) : NULL;
	const char *err = cJSON_GetStringValue(parsed ? parsed : raw);
	if (cJSON_IsNumber(code) && code->valuedouble == 0) {
		cJSON_Delete(parsed);
		cJSON_Delete(result);
		e2bw_files_answer_stat(core, call, path);
		return;
	}
	char message[400];
	snprintf(message, sizeof message, "chmod/chown of '%.200s' failed (exit %g): %.150s", path,
		cJSON_IsNumber(code) ? code->valuedouble : -1, err && err[0] ? err : "no message");
	for (char *c = message; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	cJSON_Delete(parsed);
	cJSON_Delete(result);
	cJSON *e;
	if (strstr(message, "invalid user") || strstr(message, "invalid group") ||
		strstr(message, "invalid spec")) {
		e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: %s", message);
		e2bw_error_set_str(e, "field", strstr(message, "invalid group") ? "group" : "owner");
	} else {
		e = e2bw_files_error_text(message, path, E2BW_ERR_BACKEND);
	}
	e2bw_call_fail(core, call, e);
}

void e2bw_files_chmod_then_stat(e2bw_core *core, e2bw_call *call)
{
	const char *path = e2bw_call_param_str(call, "path");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(call->params, "mode");
	const char *owner = e2bw_call_param_str(call, "owner");
	const char *group = e2bw_call_param_str(call, "group");
	if (!cJSON_IsNumber(mode) && !owner && !group) {
		e2bw_files_answer_stat(core, call, path);
		return;
	}
	char mode_text[16] = "", owner_text[160] = "";
	if (cJSON_IsNumber(mode))
		snprintf(mode_text, sizeof mode_text, "%04o", (unsigned)mode->valuedouble);
	if (owner || group)
		snprintf(owner_text, sizeof owner_text, "%s%s%s", owner ? owner : "", group ? ":" : "",
			group ? group : "");
	cJSON *msg = cJSON_CreateObject();
	cJSON *process = cJSON_AddObjectToObject(msg, "process");
	cJSON_AddStringToObject(process, "cmd", "/bin/sh");
	cJSON *args = cJSON_AddArrayToObject(process, "args");
	const char *argv[] = {"-c", CHMOD_SCRIPT, "e2bw-chmod", mode_text, owner_text, path};
	for (size_t i = 0; i < sizeof argv / sizeof argv[0]; i++)
		cJSON_AddItemToArray(args, cJSON_CreateString(argv[i]));
	cJSON_AddBoolToObject(msg, "stdin", 0);
	e2bw_run_internal(core, call, msg, "root", CHMOD_TIMEOUT_S, chmod_done);
}

static void chmod_go(e2bw_core *core, e2bw_call *call)
{
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(call->params, "mode");
	if (!cJSON_IsNumber(mode) && !e2bw_call_param_str(call, "owner") &&
		!e2bw_call_param_str(call, "group")) {
		cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: give 'mode', 'owner', 'group' or several");
		e2bw_call_fail(core, call, e2bw_error_set_str(e, "field", "mode"));
		return;
	}
	e2bw_files_chmod_then_stat(core, call);
}

void e2bw_files_chmod(e2bw_core *core, e2bw_call *call)
{
	e2bw_envd_ensure(core, call, chmod_go);
}
