/* An image's summary and config (images_config.h). */
#include "images/images_config.h"

#include "lib/err.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

const char *images_config_host_arch(void)
{
	static const char *const names[][2] = {{"x86_64", "amd64"}, {"aarch64", "arm64"}, {"i686", "386"},
		{"armv7l", "arm"}, {"ppc64le", "ppc64le"}, {"s390x", "s390x"}, {"riscv64", "riscv64"}};
	struct utsname u;
	if (uname(&u) != 0)
		return "amd64";
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(u.machine, names[i][0]) == 0)
			return names[i][1];
	return "amd64";
}

static bool digest_ok(const char *d)
{
	return d && strncmp(d, "sha256:", 7) == 0 && strlen(d) == 71 &&
		strspn(d + 7, "0123456789abcdef") == 64;
}

static const char *string_of(const cJSON *o, const char *a, const char *b)
{
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, a));
	return v ? v : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, b));
}

int images_config_check_platform(const cJSON *doc, const char *shown, struct err *err)
{
	const char *os = string_of(doc, "os", "Os");
	const char *arch = string_of(doc, "architecture", "Architecture");
	const char *host = images_config_host_arch();
	if (os && arch && strcmp(os, "linux") == 0 && strcmp(arch, host) == 0)
		return 0;
	err_set(err, 0, "image '%.200s' is for %.32s/%.32s, not linux/%s (this machine's)", shown,
		os ? os : "?", arch ? arch : "?", host);
	return -1;
}

const char *images_config_pick(const cJSON *index, const char *shown, struct err *err)
{
	const char *arch = images_config_host_arch();
	char seen[200] = "";
	const cJSON *m;
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(index, "manifests")) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "platform");
		const char *os = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "os"));
		const char *a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, "architecture"));
		const char *digest = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "digest"));
		if (os && a && strcmp(os, "linux") == 0 && strcmp(a, arch) == 0 && digest_ok(digest))
			return digest;
		size_t used = strlen(seen);
		if (os && a && used < sizeof seen - 1)
			snprintf(seen + used, sizeof seen - used, "%s%.32s/%.32s", used ? ", " : "", os, a);
	}
	err_set(err, 0, "image '%.200s' has no linux/%s variant (it has %s)", shown, arch,
		seen[0] ? seen : "none");
	return NULL;
}

int images_config_layers(const cJSON *manifest, double *bytes, struct err *err)
{
	const cJSON *layers = cJSON_GetObjectItemCaseSensitive(manifest, "layers"), *l;
	const cJSON *config = cJSON_GetObjectItemCaseSensitive(manifest, "config");
	if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(manifest, "schemaVersion")) != 2 ||
		!cJSON_IsArray(layers) ||
		!digest_ok(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(config, "digest")))) {
		err_set(err, 0, "the registry's manifest is not an image manifest of schema 2");
		return -1;
	}
	*bytes = 0;
	cJSON_ArrayForEach(l, layers) {
		double size = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(l, "size"));
		*bytes += size > 0 ? size : 0;
	}
	return cJSON_GetArraySize(layers);
}

cJSON *images_config_diff_ids(const cJSON *config, struct err *err)
{
	const cJSON *ids =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(config, "rootfs"),
			"diff_ids");
	if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) == 0) {
		err_set(err, 0, "the image's config lists no layers (rootfs.diff_ids)");
		return NULL;
	}
	const cJSON *id;
	cJSON_ArrayForEach(id, ids) {
		if (!digest_ok(cJSON_GetStringValue(id))) {
			err_set(err, 0, "the image's config has a malformed layer digest (rootfs.diff_ids)");
			return NULL;
		}
	}
	cJSON *copy = cJSON_Duplicate(ids, true);
	if (!copy)
		err_set(err, 0, "out of memory");
	return copy;
}

/* s[0..n) without the blanks around it. */
static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

cJSON *images_config_envs(const cJSON *config)
{
	cJSON *envs = cJSON_CreateObject();
	const cJSON *list =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(config, "config"), "Env");
	const cJSON *e;
	cJSON_ArrayForEach(e, list) {
		const char *entry = cJSON_GetStringValue(e);
		const char *eq = entry ? strchr(entry, '=') : NULL;
		if (!envs || !eq)
			continue;
		const char *key = entry, *value = eq + 1;
		size_t klen = (size_t)(eq - entry), vlen = strlen(value);
		trim(&key, &klen);
		trim(&value, &vlen);
		char k[256], v[4096];
		if (klen == 0 || vlen == 0 || klen >= sizeof k || vlen >= sizeof v)
			continue;
		memcpy(k, key, klen);
		k[klen] = '\0';
		memcpy(v, value, vlen);
		v[vlen] = '\0';
		cJSON_DeleteItemFromObjectCaseSensitive(envs, k); /* a later entry wins */
		cJSON_AddStringToObject(envs, k, v);
	}
	return envs;
}

const char *images_config_workdir(const cJSON *config)
{
	const char *w = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(config, "config"),
			"WorkingDir"));
	return w && w[0] == '/' ? w : NULL;
}
