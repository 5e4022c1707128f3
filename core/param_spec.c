/* param_spec.c — see param_spec.h. */
#include "param_spec.h"

#include <stdio.h>
#include <string.h>

#include "base64.h"
#include "errors.h"
#include "names.h"
#include "params.h"
#include "rfc3339.h"

/* Names and numeric ranges of the parameter types: the check's ranges, and
 * e2bw_describe_methods's (docs/epp-methods.json takes its ranges from here;
 * a test checks). */
static const struct {
	const char *name;
	double min, max; /* min > max: no numeric range */
} param_types[] = {
	[E2BW_P_STRING] = {"string", 1, 0},
	[E2BW_P_SANDBOX_ID] = {"sandbox_id", 1, 0},
	[E2BW_P_SECONDS] = {"seconds", 0, 2147483647},
	[E2BW_P_BOOL] = {"boolean", 1, 0},
	[E2BW_P_OBJECT] = {"object", 1, 0},
	[E2BW_P_STRING_MAP] = {"string_map", 1, 0},
	[E2BW_P_STATE_FILTER] = {"state_filter", 1, 0},
	[E2BW_P_LIMIT] = {"limit", 1, 100},
	[E2BW_P_TEMPLATE_SET] = {"template_set", 1, 0},
	[E2BW_P_TEXT] = {"text", 1, 0},
	[E2BW_P_PID] = {"pid", 1, 4294967295.0},
	[E2BW_P_ENCODING] = {"encoding", 1, 0},
	[E2BW_P_SIGNAL] = {"signal", 1, 0},
	[E2BW_P_DIM] = {"dimension", 1, 65535},
	[E2BW_P_USER] = {"user", 1, 0},
	[E2BW_P_DATA] = {"data", 1, 0},
	[E2BW_P_RESOURCE] = {"resource", 1, 2147483647},
	[E2BW_P_NO_GPU] = {"no_gpu", 1, 0},
	[E2BW_P_PATH] = {"path", 1, 0},
	[E2BW_P_MODE] = {"mode", 0, 07777},
	[E2BW_P_OFFSET] = {"offset", 0, 1e15},
	[E2BW_P_DEPTH] = {"depth", 1, 64},
	[E2BW_P_COUNT] = {"count", 1, 10000},
	[E2BW_P_PORT] = {"port", 1, 65535},
	[E2BW_P_OPERATION] = {"operation", 1, 0},
	[E2BW_P_ARRAY] = {"array", 1, 0},
	[E2BW_P_TIME] = {"time", 1, 0},
};

const char *e2bw_param_type_name(e2bw_param_type type, double *min, double *max)
{
	*min = param_types[type].min;
	*max = param_types[type].max;
	return param_types[type].name;
}

static cJSON *param_error(const char *field, const char *what)
{
	cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS, "Invalid params: '%s' %s", field, what);
	return e2bw_error_set_str(e, "field", field);
}

static int sandbox_id_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 128)
		return 0;
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '_'))
			return 0;
	}
	return 1;
}

static int state_ok(const cJSON *item)
{
	return cJSON_IsString(item) &&
		(!strcmp(item->valuestring, "running") || !strcmp(item->valuestring, "paused"));
}

/* An in-range integer (ranges from param_types). */
static int int_in_range(const e2bw_param *p, const cJSON *v)
{
	double x = cJSON_IsNumber(v) ? v->valuedouble : -1;
	return x >= param_types[p->type].min && x <= param_types[p->type].max && x == (double)(long long)x;
}

static cJSON *check_one(const e2bw_param *p, const cJSON *v, const cJSON *params)
{
	switch (p->type) {
	case E2BW_P_STRING:
		if (!cJSON_IsString(v) || !v->valuestring[0])
			return param_error(p->name, "must be a non-empty string");
		return NULL;
	case E2BW_P_SANDBOX_ID:
		if (!cJSON_IsString(v))
			return param_error(p->name, "must be a string");
		if (!sandbox_id_ok(v->valuestring))
			return param_error(p->name,
				"must be a bare sandbox id (letters, digits, '-' or '_', at most 128)");
		return NULL;
	case E2BW_P_SECONDS:
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= param_types[p->type].min) ||
			v->valuedouble > param_types[p->type].max)
			return param_error(p->name, "must be a number of seconds between 0 and 2147483647");
		return NULL;
	case E2BW_P_BOOL:
		if (!cJSON_IsBool(v))
			return param_error(p->name, "must be a boolean");
		return NULL;
	case E2BW_P_OBJECT:
		if (!cJSON_IsObject(v))
			return param_error(p->name, "must be an object");
		return NULL;
	case E2BW_P_TIME: {
		/* Unix seconds, or RFC 3339 in UTC (the samples' own timestamps): a
     * zone offset would be read as UTC, so it is refused */
		double ms;
		const char *t = cJSON_IsString(v) ? v->valuestring : "";
		size_t n = strlen(t);
		if ((cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e11) ||
			(n && (t[n - 1] == 'Z' || t[n - 1] == 'z') && !e2bw_rfc3339_ms(t, &ms)))
			return NULL;
		return param_error(p->name, "must be Unix seconds or an RFC 3339 time in UTC (ending in Z)");
	}
	case E2BW_P_ARRAY:
		if (!cJSON_IsArray(v))
			return param_error(p->name, "must be an array");
		return NULL;
	case E2BW_P_STRING_MAP: {
		if (!cJSON_IsObject(v))
			return param_error(p->name, "must be an object of string values");
		const cJSON *item;
		cJSON_ArrayForEach(item, v) {
			if (!cJSON_IsString(item)) {
				char field[160];
				snprintf(field, sizeof field, "%s.%s", p->name,
					item->string ? item->string : "?");
				return param_error(field, "must be a string");
			}
		}
		return NULL;
	}
	case E2BW_P_STATE_FILTER: {
		if (cJSON_IsString(v)) {
			if (!state_ok(v))
				return param_error(p->name,
					"must be \"running\" or \"paused\" (or an array of them)");
			return NULL;
		}
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
			return param_error(p->name,
				"must be \"running\", \"paused\" or a non-empty array of them");
		const cJSON *item;
		cJSON_ArrayForEach(item, v)
			if (!state_ok(item))
				return param_error(p->name, "items must be \"running\" or \"paused\"");
		return NULL;
	}
	case E2BW_P_LIMIT:
		if (!int_in_range(p, v))
			return param_error(p->name, "must be an integer from 1 to 100");
		return NULL;
	case E2BW_P_TEMPLATE_SET:
		return param_error(p->name,
			"cannot be chosen at create time on E2B: the template fixes it (leave it out or null)");
	case E2BW_P_TEXT:
		if (!cJSON_IsString(v))
			return param_error(p->name, "must be a string");
		return NULL;
	case E2BW_P_PATH:
		if (!cJSON_IsString(v) || !v->valuestring[0])
			return param_error(p->name, "must be a non-empty absolute path");
		if (v->valuestring[0] != '/')
			return param_error(p->name,
				"must be an absolute path (starting with '/'): paths are taken literally");
		if (strlen(v->valuestring) > 4096)
			return param_error(p->name, "must be at most 4096 bytes");
		return NULL;
	case E2BW_P_MODE:
		return int_in_range(p, v)
			? NULL
			: param_error(p->name,
				  "must be POSIX permission bits: an integer from 0 to 0o7777 (4095)");
	case E2BW_P_OFFSET:
		return int_in_range(p, v) ? NULL : param_error(p->name, "must be an integer from 0 to 10^15");
	case E2BW_P_DEPTH:
		return int_in_range(p, v) ? NULL : param_error(p->name, "must be an integer from 1 to 64");
	case E2BW_P_COUNT:
		return int_in_range(p, v) ? NULL : param_error(p->name, "must be an integer from 1 to 10000");
	case E2BW_P_PORT:
		return int_in_range(p, v)
			? NULL
			: param_error(p->name, "must be a TCP port: an integer from 1 to 65535");
	case E2BW_P_OPERATION:
		if (!cJSON_IsString(v) || (strcmp(v->valuestring, "read") && strcmp(v->valuestring, "write")))
			return param_error(p->name, "must be \"read\" or \"write\"");
		return NULL;
	case E2BW_P_RESOURCE:
		if (!int_in_range(p, v))
			return param_error(p->name, "must be a positive integer (a CPU count, or MiB)");
		return NULL;
	case E2BW_P_NO_GPU:
		if ((cJSON_IsNumber(v) && v->valuedouble == 0) || cJSON_IsFalse(v) ||
			(cJSON_IsString(v) && (!v->valuestring[0] || !strcmp(v->valuestring, "none"))))
			return NULL;
		return param_error(p->name,
			"cannot be honoured: E2B sandboxes have no GPU (leave it out, null or 0)");
	case E2BW_P_DATA: {
		if (!cJSON_IsString(v))
			return param_error(p->name, "must be a string");
		if (!e2bw_param_base64(params))
			return NULL;
		if (!e2bw_base64_valid(v->valuestring, strlen(v->valuestring)))
			return param_error(p->name, "is not base64 (encoding is \"base64\")");
		return NULL;
	}
	case E2BW_P_PID:
		if (!(e2bw_param_pid(v, NULL) > 0))
			return param_error(p->name,
				"must be a process id (a positive integer, or its decimal string)");
		return NULL;
	case E2BW_P_ENCODING:
		if (e2bw_param_encoding(v) < 0)
			return param_error(p->name,
				"must be \"utf8\" (or \"utf-8\") or \"base64\", in any case");
		return NULL;
	case E2BW_P_SIGNAL:
		if (!e2bw_param_signal(v))
			return param_error(p->name,
				"must be \"SIGTERM\" or \"SIGKILL\" (the signals envd delivers)");
		return NULL;
	case E2BW_P_DIM:
		if (!int_in_range(p, v))
			return param_error(p->name, "must be an integer from 1 to 65535");
		return NULL;
	case E2BW_P_USER:
		if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) > 64 ||
			strpbrk(v->valuestring, ":\r\n\t "))
			return param_error(p->name, "must be a user name (no ':' or spaces)");
		return NULL;
	}
	return NULL;
}

static int known_param(const e2bw_method *m, const char *name)
{
	for (const e2bw_param *p = m->params; p && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return 1;
	return 0;
}

/* A member that is no parameter but close to one (names.h) is refused: its
 * value would be lost without a word. Others are extensions, ignored. */
static cJSON *near_miss(const e2bw_method *m, const cJSON *params)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, params) {
		if (!item->string || known_param(m, item->string))
			continue;
		e2bw_name_match best = E2BW_NAME_MATCH_INIT;
		for (const e2bw_param *p = m->params; p && p->name; p++)
			e2bw_name_consider(&best, item->string, p->name);
		if (!best.meant)
			continue;
		cJSON *e = e2bw_error_new(E2BW_ERR_INVALID_PARAMS,
			"Invalid params: '%.60s' is not a parameter of %s: did you mean '%s'?", item->string,
			m->name, best.meant);
		return e2bw_error_set_str(e2bw_error_set_str(e, "field", item->string), "did_you_mean",
			best.meant);
	}
	return NULL;
}

cJSON *e2bw_params_check(const e2bw_method *m, const cJSON *params)
{
	cJSON *miss = params ? near_miss(m, params) : NULL;
	if (miss)
		return miss;
	for (const e2bw_param *p = m->params; p && p->name; p++) {
		const cJSON *v = params ? cJSON_GetObjectItemCaseSensitive(params, p->name) : NULL;
		if (!v || cJSON_IsNull(v)) {
			if (p->required)
				return param_error(p->name, "is required");
			continue;
		}
		cJSON *err = check_one(p, v, params);
		if (err)
			return err;
	}
	return NULL;
}
