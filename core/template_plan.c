/* template_plan.c — see template_plan.h. */
#include "template_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dockerfile.h"
#include "errors.h"
#include "json_add.h"
#include "template_context.h"

static const cJSON *param(const cJSON *params, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, name);
	return cJSON_IsNull(v) ? NULL : v;
}

static cJSON *field_error(const char *field, const char *what)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: '%s' %s", field, what);
	return e2bw_error_set_str(e, "field", field);
}

/* E2B's step types as the SDK makes them, and their args. */
static const struct {
	const char *type;
	int min, max; /* max 0: pairs without end (ENV) */
} step_types[] = {{"RUN", 1, 2}, {"COPY", 2, 4}, {"ENV", 2, 0}, {"WORKDIR", 1, 1}, {"USER", 1, 1}};

static int outside(const char *src)
{
	e2bw_buf b = {0};
	int rc = e2bw_context_path(&b, src);
	e2bw_buf_free(&b);
	return rc == -1; /* out of memory: the selection finds out again */
}

static int octal_mode(const char *s)
{
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '7')
		n++;
	return !s[n] && n <= 4;
}

/* One of E2B's steps ({type, args, force?}), checked and copied in the
 * SDK's shape: COPY always has its four args (src, dest, user, mode). */
static cJSON *step_from(const cJSON *given, int i, cJSON *steps)
{
	char field[64];
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(given, "type");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(given, "args");
	const cJSON *force = cJSON_GetObjectItemCaseSensitive(given, "force");
	int kind = -1, n = cJSON_GetArraySize(args);
	for (int k = 0; cJSON_IsString(type) && k < (int)(sizeof step_types / sizeof step_types[0]); k++)
		if (!strcmp(type->valuestring, step_types[k].type))
			kind = k;
	const cJSON *a;
	int strings = cJSON_IsArray(args);
	cJSON_ArrayForEach(a, args)
		strings &= cJSON_IsString(a);
	const char *what = NULL, *member = "type";
	if (!cJSON_IsObject(given))
		what = "must be a step object {type, args, force?}";
	else if (kind < 0)
		what = "must be one of RUN, COPY, ENV, WORKDIR, USER";
	else if ((member = "args", !strings) || n < step_types[kind].min ||
		(step_types[kind].max ? n > step_types[kind].max : n % 2))
		what = kind == 2
			? "must be strings: KEY, value pairs"
			: "must be an array of strings of the step's arity (RUN: command [, user]; COPY: src, dest [, user, mode]; WORKDIR: path; USER: name)";
	else if ((member = "force", force && !cJSON_IsBool(force)))
		what = "must be a boolean";
	else if (kind == 1 &&
		(member = "args", !octal_mode(n > 3 ? cJSON_GetArrayItem(args, 3)->valuestring : "")))
		what = "has a mode (the fourth) that is not octal permission bits such as \"0755\"";
	else if (kind == 1 && outside(cJSON_GetArrayItem(args, 0)->valuestring))
		what = "has a source (the first) outside the context: absolute, or leaving it with '..'";
	if (what) {
		snprintf(field, sizeof field, "steps[%d].%s", i, member);
		return field_error(field, what);
	}
	cJSON *step = cJSON_CreateObject(), *copy = cJSON_Duplicate(args, 1);
	for (int k = n; kind == 1 && k < 4; k++)
		e2bw_push(copy, cJSON_CreateString(""));
	cJSON_AddStringToObject(step, "type", type->valuestring);
	e2bw_add(step, "args", copy);
	cJSON_AddBoolToObject(step, "force", cJSON_IsTrue(force));
	e2bw_push(steps, step);
	return NULL;
}

/* Adds filesHash to every COPY step, from the context files it names. */
static cJSON *hash_copies(cJSON *plan, const cJSON *lines, const cJSON *context, int dockerfile, int *oom)
{
	cJSON *step;
	int i = 0;
	cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(plan, "steps")) {
		i++;
		if (strcmp(cJSON_GetObjectItemCaseSensitive(step, "type")->valuestring, "COPY"))
			continue;
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args");
		const char *src = cJSON_GetArrayItem(args, 0)->valuestring,
			   *dest = cJSON_GetArrayItem(args, 1)->valuestring;
		e2bw_context_entry *picked;
		size_t n;
		char hex[65];
		int rc = e2bw_context_select(context, src, &picked, &n);
		rc = rc || (n && e2bw_context_hash(picked, n, src, dest, hex));
		e2bw_context_entries_free(picked, n);
		if (rc) {
			*oom = 1;
			return NULL;
		}
		if (n) {
			cJSON_AddStringToObject(step, "filesHash", hex);
			continue;
		}
		int line = (int)cJSON_GetArrayItem(lines, i)->valuedouble;
		cJSON *e = dockerfile
			? e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
				  "Invalid params: dockerfile line %d: COPY source '%.200s' names nothing in the context",
				  line, src)
			: e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
				  "Invalid params: 'steps[%d].args' COPY source '%.200s' names nothing in the context",
				  i - 1, src);
		char field[32];
		snprintf(field, sizeof field, "steps[%d].args", i - 1);
		e2bw_error_set_str(e, "field", dockerfile ? "dockerfile" : field);
		if (dockerfile)
			e2bw_error_set_num(e, "line", line);
		return e;
	}
	return NULL;
}

/* The base and its credentials. */
static cJSON *base_of(const cJSON *params, cJSON *plan, int dockerfile)
{
	const cJSON *image = param(params, "from_image"), *tpl = param(params, "from_template"),
		    *registry = param(params, "registry");
	if (dockerfile && (image || tpl))
		return field_error(image ? "from_image" : "from_template",
			"cannot be given with a dockerfile: its FROM names the base");
	if (!dockerfile && !image == !tpl)
		return field_error(image ? "from_template" : "from_image",
			image ? "cannot be given with from_image: one base"
			      : "is required with steps (or from_template): the base to build on");
	if (image)
		cJSON_AddStringToObject(plan, "fromImage", image->valuestring);
	if (tpl)
		cJSON_AddStringToObject(plan, "fromTemplate", tpl->valuestring);
	if (!registry)
		return NULL;
	if (tpl)
		return field_error("registry", "is for an image from a registry, not from_template");
	const cJSON *user = cJSON_GetObjectItemCaseSensitive(registry, "username"),
		    *pass = cJSON_GetObjectItemCaseSensitive(registry, "password");
	if (!cJSON_IsString(user) || !user->valuestring[0])
		return field_error("registry.username", "must be a non-empty string");
	if (!cJSON_IsString(pass) || !pass->valuestring[0])
		return field_error("registry.password", "must be a non-empty string");
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "type", "registry");
	cJSON_AddStringToObject(r, "username", user->valuestring);
	cJSON_AddStringToObject(r, "password", pass->valuestring);
	e2bw_add(plan, "fromImageRegistry", r);
	return NULL;
}

static cJSON *plan_of(cJSON *params, cJSON **plan, cJSON **lines, int *oom, unsigned long mark)
{
	const cJSON *dockerfile = param(params, "dockerfile"), *steps = param(params, "steps");
	cJSON *context = cJSON_GetObjectItemCaseSensitive(params, "context");
	if (cJSON_IsNull(context))
		context = NULL;
	cJSON *error = NULL;
	if (dockerfile && steps)
		return field_error("steps", "cannot be given with a dockerfile: give one or the other");
	if (context && ((error = e2bw_context_check(context, oom)) || *oom))
		return error;
	if (dockerfile) {
		if ((error = e2bw_dockerfile_parse(dockerfile->valuestring, plan, lines)) || !*plan)
			return error;
	} else {
		*plan = cJSON_CreateObject();
		*lines = cJSON_CreateArray();
		cJSON *out = cJSON_AddArrayToObject(*plan, "steps");
		const cJSON *s;
		int i = 0;
		e2bw_push(*lines, cJSON_CreateNumber(0));
		cJSON_ArrayForEach(s, steps) {
			if ((error = step_from(s, i++, out)))
				return error;
			e2bw_push(*lines, cJSON_CreateNumber(0));
		}
	}
	const cJSON *start = param(params, "start_cmd"), *ready = param(params, "ready_cmd");
	/* the call's own commands win over the Dockerfile's CMD / ENTRYPOINT */
	if (start)
		cJSON_DeleteItemFromObjectCaseSensitive(*plan, "startCmd");
	if (start || ready)
		cJSON_DeleteItemFromObjectCaseSensitive(*plan, "readyCmd");
	if (start)
		cJSON_AddStringToObject(*plan, "startCmd", start->valuestring);
	if (ready)
		cJSON_AddStringToObject(*plan, "readyCmd", ready->valuestring);
	cJSON_AddBoolToObject(*plan, "force", cJSON_IsTrue(param(params, "skip_cache")));
	if ((error = base_of(params, *plan, dockerfile != NULL)))
		return error;
	if (e2bw_alloc_failures() != mark)
		return NULL; /* a step may be partial: the plan is dropped */
	return hash_copies(*plan, *lines, context, dockerfile != NULL, oom);
}

cJSON *e2bw_template_plan(cJSON *params, cJSON **plan, cJSON **lines)
{
	unsigned long failures = e2bw_alloc_failures();
	int oom = 0;
	*plan = *lines = NULL;
	cJSON *error = plan_of(params, plan, lines, &oom, failures);
	if (!error && !oom && *plan && e2bw_alloc_failures() == failures)
		return NULL;
	cJSON_Delete(*plan);
	cJSON_Delete(*lines);
	*plan = *lines = NULL;
	return error;
}
