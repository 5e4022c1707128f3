/* libFuzzer target: Dockerfile text and COPY sources. The input is a
 * Dockerfile, turned into E2B's build body over a small context (so COPY
 * sources are selected — paths, directories, patterns — and hashed). It is
 * either a plan whose every step is one E2B knows with string args, and
 * whose lines match its steps, or a -32602 naming the Dockerfile (or the
 * context); never anything else, a crash, a leak or a hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "template_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *str_of(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void check_plan(const cJSON *plan, const cJSON *lines)
{
	static const char *const types[] = {"RUN", "COPY", "ENV", "WORKDIR", "USER"};
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(plan, "steps"), *step, *arg;
	if (!str_of(plan, "fromImage") || !cJSON_IsArray(steps) ||
		cJSON_GetArraySize(lines) != cJSON_GetArraySize(steps) + 1)
		abort();
	cJSON_ArrayForEach(step, steps) {
		const char *type = str_of(step, "type");
		int known = 0;
		for (int i = 0; type && i < 5; i++)
			known |= !strcmp(type, types[i]);
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(step, "args");
		if (!known || !cJSON_IsArray(args) || !cJSON_GetArraySize(args))
			abort();
		cJSON_ArrayForEach(arg, args)
			if (!cJSON_IsString(arg))
				abort();
		if (!strcmp(type, "COPY") &&
			(cJSON_GetArraySize(args) != 4 || !str_of(step, "filesHash") ||
				strlen(str_of(step, "filesHash")) != 64))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	cJSON *params = cJSON_Parse(
		"{\"context\":[{\"path\":\"a\",\"content\":\"aGkK\"},{\"path\":\"d/x.py\",\"content\":\"\",\"mode\":493},"
		"{\"path\":\"d/e/y\",\"content\":\"eQ==\"},{\"path\":\".hidden\",\"content\":\"\"}]}");
	cJSON_AddStringToObject(params, "dockerfile", text);
	free(text);
	cJSON *plan = NULL, *lines = NULL;
	cJSON *error = params ? e2bw_template_plan(params, &plan, &lines) : NULL;
	if (plan) {
		if (error)
			abort();
		check_plan(plan, lines);
	} else if (error) {
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(error, "code");
		const char *field = str_of(cJSON_GetObjectItemCaseSensitive(error, "data"), "field");
		if (!cJSON_IsNumber(code) || code->valuedouble != -32602 || !field ||
			(strcmp(field, "dockerfile") && strncmp(field, "context", 7)))
			abort();
	}
	cJSON_Delete(error);
	cJSON_Delete(plan);
	cJSON_Delete(lines);
	cJSON_Delete(params);
	return 0;
}
