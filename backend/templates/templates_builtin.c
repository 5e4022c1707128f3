/* Built-in templates as E2B's template API shows them (templates_builtin.h). */
#include "templates/templates_builtin.h"

#include "lib/sha256.h"
#include "runtime/runtime.h"
#include "runtime/runtime_overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A UUID-shaped build id (E2B's builds have UUIDs) that stays the same for
 * the same root filesystem: from its name and time. */
static void build_id(const char *name, long long mtime_ms, char out[TEMPLATES_BUILD_ID_LEN + 1])
{
	char seed[96];
	uint8_t d[SHA256_DIGEST_LEN];
	int n = snprintf(seed, sizeof seed, "%s:%lld", name, mtime_ms);
	sha256(seed, (size_t)n, d);
	d[6] = (uint8_t)((d[6] & 0x0f) | 0x50); /* version 5 (name-based, here SHA-256) */
	d[8] = (uint8_t)((d[8] & 0x3f) | 0x80); /* the RFC 4122 variant */
	snprintf(out, TEMPLATES_BUILD_ID_LEN + 1,
		"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", d[0], d[1], d[2],
		d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]);
}

bool templates_builtin_find(const char *name, struct templates_builtin *out)
{
	if (strlen(name) > TEMPLATES_ID_LEN || !templates_valid_name(name, TEMPLATES_ID_LEN))
		return false;
	char *rootfs = runtime_template_rootfs(name);
	struct stat st;
	bool found = rootfs && stat(rootfs, &st) == 0 && S_ISDIR(st.st_mode);
	free(rootfs);
	if (!found)
		return false;
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name);
	int64_t ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	struct template_build *b = &out->build;
	build_id(name, (long long)ms, b->id);
	snprintf(b->template_id, sizeof b->template_id, "%s", name);
	b->status = BUILD_READY;
	b->cpu_count = SANDBOX_DEFAULT_CPU_COUNT;
	b->memory_mb = SANDBOX_DEFAULT_MEMORY_MB;
	b->disk_mb = SANDBOX_DEFAULT_DISK_SIZE_MB;
	b->created_ms = b->updated_ms = b->finished_ms = ms;
	struct template *t = &out->tpl;
	snprintf(t->id, sizeof t->id, "%s", name);
	t->name = out->name;
	t->builds = b;
	t->builtin = true;
	t->created_ms = t->updated_ms = ms;
	return true;
}
