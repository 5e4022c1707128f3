/* params.c — readers of validated EPP parameters (params.h). */
#include <string.h>

#include "params.h"
#include "names.h"

double e2bw_param_pid(const cJSON *params, const char *name)
{
	const cJSON *v = name ? cJSON_GetObjectItemCaseSensitive(params, name) : params;
	double pid = 0;
	if (cJSON_IsNumber(v)) {
		pid = v->valuedouble;
	} else if (cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) <= 10) {
		for (const char *c = v->valuestring; *c; c++) {
			if (*c < '0' || *c > '9')
				return 0;
			pid = pid * 10 + (*c - '0');
		}
	}
	if (!(pid >= 1 && pid <= 4294967295.0) || pid != (double)(long long)pid)
		return 0;
	return pid;
}

const char *e2bw_param_signal(const cJSON *v)
{
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble == 15)
			return "SIGNAL_SIGTERM";
		if (v->valuedouble == 9)
			return "SIGNAL_SIGKILL";
		return NULL;
	}
	if (!cJSON_IsString(v))
		return NULL;
	const char *s = v->valuestring;
	if (!strcmp(s, "SIGTERM") || !strcmp(s, "TERM") || !strcmp(s, "15"))
		return "SIGNAL_SIGTERM";
	if (!strcmp(s, "SIGKILL") || !strcmp(s, "KILL") || !strcmp(s, "9"))
		return "SIGNAL_SIGKILL";
	return NULL;
}

int e2bw_param_encoding(const cJSON *v)
{
	if (!cJSON_IsString(v))
		return -1;
	if (e2bw_name_equal_nocase(v->valuestring, "base64"))
		return 1;
	if (e2bw_name_equal_nocase(v->valuestring, "utf8") || e2bw_name_equal_nocase(v->valuestring, "utf-8"))
		return 0;
	return -1;
}

int e2bw_param_base64(const cJSON *params)
{
	return e2bw_param_encoding(cJSON_GetObjectItemCaseSensitive(params, "encoding")) == 1;
}
