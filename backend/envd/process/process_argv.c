/* The vectors a process is executed with (process_argv.h). */
#define _GNU_SOURCE
#include "envd/process/process_argv.h"
#include "envd/process/process_spawn.h"

#include "lib/text.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void process_argv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

char **process_argv_new(const char *cmd, const cJSON *args)
{
	size_t n = 1 + (size_t)(args ? cJSON_GetArraySize(args) : 0);
	char **argv = calloc(n + 1, sizeof *argv);
	if (!argv)
		return NULL;
	size_t i = 0;
	argv[i++] = strdup(cmd);
	const cJSON *a;
	if (args) {
		cJSON_ArrayForEach(a, args) {
			argv[i++] = strdup(a->valuestring);
		}
	}
	for (size_t k = 0; k < n; k++) {
		if (!argv[k]) {
			for (size_t j = 0; j < n; j++)
				free(argv[j]);
			free(argv);
			return NULL;
		}
	}
	return argv;
}

struct env_list {
	char **items;
	size_t count, cap;
	bool failed;
};

/* Adds key=value; a later value for the same key replaces the earlier one,
 * as Go's exec does with duplicate keys. */
static void env_set(struct env_list *env, const char *key, const char *value)
{
	char *entry = text_printf("%s=%s", key, value);
	if (!entry) {
		env->failed = true;
		return;
	}
	size_t klen = strcspn(entry, "=");
	for (size_t i = 0; i < env->count; i++) {
		if (strncmp(env->items[i], entry, klen) == 0 && env->items[i][klen] == '=') {
			free(env->items[i]);
			env->items[i] = entry;
			return;
		}
	}
	if (env->count + 1 >= env->cap) {
		size_t cap = env->cap ? env->cap * 2 : 16;
		char **items = realloc(env->items, cap * sizeof *items);
		if (!items) {
			free(entry);
			env->failed = true;
			return;
		}
		env->items = items;
		env->cap = cap;
	}
	env->items[env->count++] = entry;
	env->items[env->count] = NULL;
}

static void env_set_all(struct env_list *env, const cJSON *map)
{
	const cJSON *e;
	if (!map)
		return;
	cJSON_ArrayForEach(e, map) {
		if (cJSON_IsString(e) && e->string)
			env_set(env, e->string, e->valuestring);
	}
}

char **process_argv_env(const struct proc_spawn *spec)
{
	struct env_list env = {0};
	env_set(&env, "PATH", spec->path_env);
	env_set(&env, "HOME", spec->home);
	env_set(&env, "USER", spec->user);
	env_set(&env, "LOGNAME", spec->user);
	env_set_all(&env, spec->sandbox_envs);
	env_set_all(&env, spec->request_envs);
	if (env.failed) {
		for (size_t i = 0; i < env.count; i++)
			free(env.items[i]);
		free(env.items);
		return NULL;
	}
	return env.items;
}

char **process_argv_sh_fallback(char **argv)
{
	static char sh[] = "/bin/sh";
	if (strcmp(argv[0], "/bin/bash") != 0)
		return NULL;
	size_t n = 0;
	while (argv[n])
		n++;
	char **v = calloc(n + 1, sizeof *v);
	if (!v)
		return NULL; /* then no fallback: the exec's own error stands */
	v[0] = sh;
	for (size_t i = 1; i < n; i++)
		v[i] = argv[i];
	return v;
}

char **process_argv_paths(const char *cmd, const char *path)
{
	if (strchr(cmd, '/')) {
		char **v = calloc(2, sizeof *v);
		if (v && !(v[0] = strdup(cmd))) {
			free(v);
			return NULL;
		}
		return v;
	}
	if (!path || !*path)
		path = "/bin:/usr/bin";
	size_t n = 1;
	for (const char *p = path; *p; p++)
		n += *p == ':';
	char **v = calloc(n + 1, sizeof *v);
	if (!v)
		return NULL;
	size_t i = 0;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		/* An empty element is the working directory, as for execvp. */
		v[i] = end == p ? text_printf("%s", cmd) : text_printf("%.*s/%s", (int)(end - p), p, cmd);
		if (!v[i++]) {
			process_argv_free(v);
			return NULL;
		}
		if (!*end)
			break;
		p = end;
	}
	return v;
}
