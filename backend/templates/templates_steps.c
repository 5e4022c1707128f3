/* Build steps: checks and the COPY script (templates_steps.h). */
#include "templates/templates_steps.h"

#include "lib/err.h"
#include "lib/text.h"
#include "templates/templates_build.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct err *err, int i, const char *what)
{
	err_set(err, 0, "steps[%d]: %s", i, what);
	return -1;
}

/* A context path: relative, no ".." segment. */
static bool context_path_ok(const char *p)
{
	if (p[0] == '\0' || p[0] == '/')
		return false;
	for (const char *s = p; s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (strncmp(s, "..", 2) == 0 && (s[2] == '/' || s[2] == '\0'))
			return false;
	}
	return true;
}

static bool mode_ok(const char *m)
{
	size_t n = strlen(m);
	if (n == 0)
		return true;
	if (n > 4)
		return false;
	for (size_t i = 0; i < n; i++)
		if (m[i] < '0' || m[i] > '7')
			return false;
	return true;
}

static int check_one(const cJSON *step, int i, struct err *err)
{
	if (!cJSON_IsObject(step))
		return fail(err, i, "must be an object");
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "type"));
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args");
	if (!type)
		return fail(err, i, "field \"type\" must be a string");
	if (args && !cJSON_IsNull(args) && !cJSON_IsArray(args))
		return fail(err, i, "field \"args\" must be an array of strings");
	int n = cJSON_GetArraySize(args);
	const cJSON *a;
	cJSON_ArrayForEach(a, args) {
		if (!cJSON_IsString(a))
			return fail(err, i, "field \"args\" must be an array of strings");
	}
#define ARG(k) (cJSON_GetArrayItem(args, (k))->valuestring)
	if (strcmp(type, "RUN") == 0) {
		if (n < 1 || n > 2 || ARG(0)[0] == '\0')
			return fail(err, i, "RUN takes [command] or [command, user]");
	} else if (strcmp(type, "COPY") == 0) {
		if (n < 2 || n > 4)
			return fail(err, i, "COPY takes [src, dest, user?, mode?]");
		if (!context_path_ok(ARG(0)))
			return fail(err, i, "COPY source must be a path inside the build context");
		if (ARG(1)[0] == '\0')
			return fail(err, i, "COPY needs a destination");
		if (n == 4 && !mode_ok(ARG(3)))
			return fail(err, i, "COPY mode must be octal digits");
		const char *hash = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "filesHash"));
		if (!hash || !hash[0])
			return fail(err, i, "COPY needs its filesHash");
	} else if (strcmp(type, "ENV") == 0) {
		if (n == 0 || n % 2 != 0)
			return fail(err, i, "ENV takes [key, value, ...]");
		for (int k = 0; k < n; k += 2)
			if (ARG(k)[0] == '\0' || strchr(ARG(k), '='))
				return fail(err, i, "ENV keys must be non-empty, without '='");
	} else if (strcmp(type, "WORKDIR") == 0 || strcmp(type, "USER") == 0) {
		if (n != 1 || ARG(0)[0] == '\0')
			return fail(err, i, "WORKDIR and USER take one non-empty argument");
	} else {
		char what[200];
		snprintf(what, sizeof what, "unknown step type '%.64s' (RUN, COPY, ENV, WORKDIR, USER)",
			type);
		return fail(err, i, what);
	}
#undef ARG
	return 0;
}

int templates_steps_check(const cJSON *steps, struct err *err)
{
	if (steps && !cJSON_IsNull(steps) && !cJSON_IsArray(steps)) {
		err_set(err, 0, "field \"steps\" must be an array");
		return -1;
	}
	int i = 0;
	const cJSON *s;
	cJSON_ArrayForEach(s, steps) {
		if (check_one(s, i++, err) != 0)
			return -1;
	}
	return 0;
}

char *templates_steps_quote(const char *s)
{
	size_t n = 2;
	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	*o++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *p;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return out;
}

/* Docker's COPY: a directory's contents go into dest; a file goes to dest,
 * or into it when dest ends in '/' or is a directory; a pattern's matches
 * go into dest. Symbolic links stay links (cp -a). Only what was copied
 * changes owner and mode. */
static const char copy_script[] =
	"ctx=$(mktemp -d /tmp/.e2b-copy-XXXXXX)\n"
	"trap 'rm -rf \"$ctx\" \"$tar\"' EXIT\n"
	"tar -xzf \"$tar\" --no-same-owner -C \"$ctx\"\n"
	"copied=()\n"
	"put_into() { mkdir -p \"$dest\"; for f in \"$@\"; do cp -a \"$f\" \"$dest/\"; "
	"copied+=(\"$dest/$(basename \"$f\")\"); done; }\n"
	"if [ -d \"$ctx/$src\" ] && [ ! -L \"$ctx/$src\" ]; then\n"
	"  shopt -s dotglob nullglob; mkdir -p \"$dest\"\n"
	"  for f in \"$ctx/$src\"/*; do cp -a \"$f\" \"$dest/\"; copied+=(\"$dest/$(basename \"$f\")\"); done\n"
	"elif [ -e \"$ctx/$src\" ] || [ -L \"$ctx/$src\" ]; then\n"
	"  if [ \"${dest%/}\" != \"$dest\" ] || [ -d \"$dest\" ]; then put_into \"$ctx/$src\"\n"
	"  else mkdir -p \"$(dirname \"$dest\")\"; cp -a \"$ctx/$src\" \"$dest\"; copied+=(\"$dest\"); fi\n"
	"else\n"
	"  shopt -s nullglob; matches=(\"$ctx\"/$src)\n"
	"  [ ${#matches[@]} -gt 0 ] || { echo \"no files match '$src' in the uploaded context\" >&2; exit 1; }\n"
	"  put_into \"${matches[@]}\"\n"
	"fi\n"
	"[ ${#copied[@]} -eq 0 ] && exit 0\n"
	"chown -R -h \"$owner\" \"${copied[@]}\"\n"
	"[ -z \"$mode\" ] || find \"${copied[@]}\" ! -type l ! -type d -exec chmod \"$mode\" {} +\n";

char *templates_steps_copy_script(const char *tar_path, const char *src, const char *dest,
	const char *workdir, const char *owner, const char *mode)
{
	char *q[6] = {templates_steps_quote(tar_path), templates_steps_quote(src),
		templates_steps_quote(dest), templates_steps_quote(owner), templates_steps_quote(mode),
		templates_steps_quote(workdir)};
	char *script = NULL;
	if (q[0] && q[1] && q[2] && q[3] && q[4] && q[5])
		script = text_printf("set -e\ntar=%s; src=%s; dest=%s; owner=%s; mode=%s\n"
				     "cd %s 2>/dev/null || cd /\n%s",
			q[0], q[1], q[2], q[3], q[4], q[5], copy_script);
	for (int i = 0; i < 6; i++)
		free(q[i]);
	return script;
}

char *templates_steps_workdir_script(const char *dir, const char *user)
{
	char *owner = text_printf("%s:", user);
	char *q[2] = {templates_steps_quote(dir), owner ? templates_steps_quote(owner) : NULL};
	char *script = NULL;
	if (q[0] && q[1])
		script = text_printf(
			"d=%s; new=; while [ ! -d \"$d\" ]; do new=$d; d=$(dirname \"$d\"); done; "
			"mkdir -p %s && { [ -z \"$new\" ] || chown -R %s \"$new\"; }",
			q[0], q[0], q[1]);
	free(owner);
	free(q[0]);
	free(q[1]);
	return script;
}

int templates_steps_check_strings(const cJSON *request, struct err *err)
{
	static const char *const strings[] = {"fromImage", "fromTemplate", "startCmd", "readyCmd"};
	for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(request, strings[k]);
		if (v && !cJSON_IsNull(v) && !cJSON_IsString(v)) {
			err_set(err, 0, "field \"%s\" must be a string", strings[k]);
			return -1;
		}
	}
	return 0;
}

int templates_steps_start_cmds(const cJSON *request, struct template_config *cfg)
{
	const char *start = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(request, "startCmd"));
	const char *ready = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(request, "readyCmd"));
	return (start && start[0] && !(cfg->start_cmd = strdup(start))) ||
			(ready && ready[0] && !(cfg->ready_cmd = strdup(ready)))
		? -1
		: 0;
}

char *templates_steps_workdir_abs(const char *workdir, const char *path)
{
	return path[0] == '/' ? strdup(path) : text_printf("%s/%s", workdir ? workdir : "/home/user", path);
}

static int apply_env(cJSON *envs, const cJSON *step)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args");
	for (int k = 0; k + 1 < cJSON_GetArraySize(args); k += 2) {
		const char *name = cJSON_GetArrayItem(args, k)->valuestring;
		cJSON_DeleteItemFromObjectCaseSensitive(envs, name);
		if (!cJSON_AddStringToObject(envs, name, cJSON_GetArrayItem(args, k + 1)->valuestring))
			return -1;
	}
	return 0;
}

int templates_steps_apply(struct template_config *cfg, const cJSON *step)
{
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "type"));
	const char *arg0 =
		cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(step, "args"), 0));
	char *value = NULL;
	if (strcmp(type, "ENV") == 0)
		return apply_env(cfg->envs, step);
	if (strcmp(type, "WORKDIR") == 0 && !(value = templates_steps_workdir_abs(cfg->workdir, arg0)))
		return -1;
	if (strcmp(type, "WORKDIR") == 0) {
		free(cfg->workdir);
		cfg->workdir = value;
	} else if (strcmp(type, "USER") == 0) {
		if (!(value = strdup(arg0)))
			return -1;
		free(cfg->user);
		cfg->user = value;
	}
	return 0;
}

void templates_steps_describe(const cJSON *step, char *out, size_t len)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args");
	out[0] = '\0';
	for (int k = 0; k < cJSON_GetArraySize(args) && strlen(out) + 100 < len; k++)
		snprintf(out + strlen(out), len - strlen(out), " %.400s",
			cJSON_GetArrayItem(args, k)->valuestring);
}
