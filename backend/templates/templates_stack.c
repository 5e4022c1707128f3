/* Templates' layers in the store (templates_stack.h). */
#include "templates/templates_stack.h"

#include "lib/err.h"
#include "lib/sha256.h"
#include "lib/text.h"
#include "net/net.h"
#include "net/net_policy.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_overlay.h"
#include "store/store_layers.h"
#include "templates/templates.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	struct templates *catalog;
	struct registry *reg;
	struct event *collect;
} g;

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

int templates_stack_builtin(const char *name, char id[STORE_NAME_MAX + 1], struct err *err)
{
	char *rootfs = runtime_template_rootfs(name);
	if (!rootfs) {
		err_set(err, 0, "template '%.64s' not found", name);
		return -1;
	}
	/* <templates>/<name>/RECIPE_HASH, beside rootfs (./build.sh writes it). */
	char hash[65] = "";
	char *recipe = text_printf("%.*s/RECIPE_HASH", (int)(strrchr(rootfs, '/') - rootfs), rootfs);
	FILE *f = recipe ? fopen(recipe, "r") : NULL;
	free(recipe);
	if (f) {
		if (!fgets(hash, sizeof hash, f))
			hash[0] = '\0';
		fclose(f);
	}
	hash[strspn(hash, "0123456789abcdef")] = '\0';
	snprintf(id, STORE_NAME_MAX + 1, "%.64s-%.16s", name, hash[0] ? hash : "unversioned");
	int rc = store_layer_add_external(id, rootfs, TEMPLATES_ORIGIN_BASE);
	if (rc != 0 && errno == ENOENT)
		err_set(err, 0, "template '%.64s' not found", name);
	else if (rc != 0)
		err_set(err, errno, "cannot use template '%.64s' as a layer: %s", name, strerror(errno));
	free(rootfs);
	return rc;
}

/* What stands for the stack in a step's key (templates_stack_key). */
static void stack_name(const cJSON *layers, char out[TEMPLATES_KEY_LEN + 8])
{
	int n = cJSON_GetArraySize(layers);
	const char *top = n ? cJSON_GetStringValue(cJSON_GetArrayItem(layers, n - 1)) : "";
	const struct store_layer *l = store_layer_find(top);
	if (n <= 1 || !l || strcmp(l->origin, TEMPLATES_ORIGIN_IMAGE) != 0) {
		snprintf(out, TEMPLATES_KEY_LEN + 8, "%s", top ? top : "");
		return;
	}
	char *all = cJSON_PrintUnformatted(layers);
	uint8_t d[SHA256_DIGEST_LEN];
	sha256(all ? all : "", all ? strlen(all) : 0, d);
	free(all);
	memcpy(out, "chain:", 6);
	hex(d, sizeof d, out + 6);
}

void templates_stack_key(const cJSON *layers, const cJSON *step, const struct template_config *cfg,
	char key[TEMPLATES_KEY_LEN + 1])
{
	char parent[TEMPLATES_KEY_LEN + 8];
	stack_name(layers, parent);
	/* Fixed member order: the printed text is the canonical form. */
	cJSON *o = cJSON_CreateObject();
	const cJSON *hash = cJSON_GetObjectItemCaseSensitive(step, "filesHash");
	cJSON_AddStringToObject(o, "parent", parent);
	cJSON_AddItemToObject(o, "type", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(step, "type"), 1));
	cJSON_AddItemToObject(o, "args", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(step, "args"), 1));
	if (cJSON_IsString(hash))
		cJSON_AddStringToObject(o, "filesHash", hash->valuestring);
	/* A WORKDIR's new directories are its user's since this mark: no layer
	 * of an older state directory, all root's, matches. */
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "type"));
	if (type && strcmp(type, "WORKDIR") == 0)
		cJSON_AddStringToObject(o, "madeBy", "user");
	cJSON_AddStringToObject(o, "user", cfg->user ? cfg->user : "");
	cJSON_AddStringToObject(o, "workdir", cfg->workdir ? cfg->workdir : "");
	cJSON_AddItemToObject(o, "envs", cJSON_Duplicate(cfg->envs, 1));
	char *text = cJSON_PrintUnformatted(o);
	uint8_t d[SHA256_DIGEST_LEN];
	/* Out of memory: a key no layer has (the step runs, uncached). */
	sha256(text ? text : "", text ? strlen(text) : 0, d);
	hex(d, sizeof d, key);
	if (!text)
		memcpy(key, "00000000", 8);
	free(text);
	cJSON_Delete(o);
}

const char **templates_stack_roots(const cJSON *layers, size_t *n, struct err *err)
{
	*n = (size_t)cJSON_GetArraySize(layers);
	const char **roots = calloc(*n ? *n : 1, sizeof *roots);
	if (!roots) {
		err_set(err, 0, "out of memory");
		return NULL;
	}
	size_t i = 0;
	const cJSON *id;
	cJSON_ArrayForEach(id, layers) {
		const struct store_layer *l = store_layer_find(cJSON_GetStringValue(id));
		if (!l) {
			err_set(err, 0, "layer %.80s of the template is missing from the store",
				cJSON_GetStringValue(id) ? id->valuestring : "?");
			free(roots);
			return NULL;
		}
		roots[i++] = l->root;
	}
	return roots;
}

#define BUILD_SANDBOX_TIMEOUT_S 86400

struct sandbox *templates_stack_sandbox(struct registry *reg, const struct template_config *cfg,
	const struct template_build *b, struct err *err)
{
	struct sandbox_spec spec = {.template_id = cfg->base,
		.timeout_s = BUILD_SANDBOX_TIMEOUT_S,
		.internal = true,
		.allow_internet_access = -1,
		.cpu_count = b->cpu_count,
		.memory_mb = b->memory_mb,
		.disk_size_mb = b->disk_mb};
	struct err rerr;
	struct sandbox *sb = NULL;
	const char **roots = templates_stack_roots(cfg->layers, &spec.layer_count, err);
	if (!roots)
		return NULL;
	spec.layers = roots;
	if (runtime_check_create(spec.template_id, spec.cpu_count, spec.memory_mb, spec.disk_size_mb,
		    &rerr) != 0 ||
		!(sb = registry_create(reg, &spec, &rerr)))
		err_set(err, 0, "cannot create the build sandbox: %s", rerr.msg);
	free(roots);
	/* The same network rules as any sandbox: egress as --sandbox-network allows. */
	struct net_policy policy = {.allow_internet_access = -1};
	if (sb && net_sandbox_attach(sb, &policy, err) != 0) {
		err_wrap(err, "cannot create the build sandbox");
		registry_kill(reg, sb);
		sb = NULL;
	}
	return sb;
}

int templates_stack_seal(struct sandbox *sb, const char *key, const char *parent, store_layer_done done,
	void *ctx, struct err *err)
{
	char upper[4096];
	struct store_seal_spec spec = {.upper = upper, .parent = parent, .origin = TEMPLATES_ORIGIN_STEP};
	spec.id = store_layer_find(key) ? NULL : key;
	/* Whiteouts and trusted.* xattrs are written as the host's root. */
	if (strcmp(runtime_isolation_name(), "full") != 0) {
		err_set(err, 0, "steps that change files need the backend's full isolation (it is %s)",
			runtime_isolation_name());
		return -1;
	}
	/* Frozen, the sandbox writes nothing while its layer is copied: the copy
	 * is consistent (the sandbox is removed after, never thawed). */
	if (runtime_sandbox_freeze(sb, true) != 0 ||
		runtime_sandbox_upper(sb, upper, sizeof upper, &spec.id_base, &spec.id_count) != 0) {
		err_set(err, errno, "cannot freeze the build sandbox: %s", strerror(errno));
		return -1;
	}
	int rc = store_layer_seal(&spec, done, ctx, NULL);
	if (rc != 0 && errno == EEXIST) {
		spec.id = NULL;
		rc = store_layer_seal(&spec, done, ctx, NULL);
	}
	if (rc != 0)
		err_set(err, errno, "cannot seal the build sandbox's files: %s", strerror(errno));
	return rc;
}

bool templates_stack_wants_image(const cJSON *req)
{
	const char *image = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "fromImage"));
	const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "fromTemplate"));
	static const char *const names[] = {"e2bdev/base", "e2bdev/base:latest", "docker.io/e2bdev/base",
		"docker.io/e2bdev/base:latest"};
	if (from || !image)
		return false;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(image, names[i]) == 0)
			return false;
	return true;
}

int templates_stack_parent(struct templates *catalog, const cJSON *req, struct template_config *cfg,
	struct err *err)
{
	const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "fromTemplate"));
	if (!from)
		from = "base";
	struct template *parent = templates_find(catalog, from);
	const char *colon = strchr(from, ':');
	struct template_build *pb = parent ? templates_ready_build(parent, colon ? colon + 1 : NULL) : NULL;
	if (parent && !pb) {
		return err_set(err, 0, "template '%.200s' has no ready build", from);
	}
	if (pb) {
		build_config_clear(cfg);
		if (build_config_copy(cfg, &pb->config) != 0)
			return err_set(err, 0, "out of memory");
		free(cfg->start_cmd);
		free(cfg->ready_cmd);
		cfg->start_cmd = cfg->ready_cmd = NULL;
	} else {
		/* A built-in template (build/templates/<name>): one external layer. */
		char id[STORE_NAME_MAX + 1];
		if (templates_stack_builtin(from, id, err) != 0)
			return -1;
		if (!(cfg->base = strdup(from)) || !(cfg->layers = cJSON_CreateArray()))
			return err_set(err, 0, "out of memory");
		cJSON_AddItemToArray(cfg->layers, cJSON_CreateString(id));
	}
	return 0;
}

/* --- collection --------------------------------------------------------------- */

static bool in(const cJSON *set, const char *id)
{
	return cJSON_GetObjectItemCaseSensitive(set, id) != NULL;
}

static void mark(cJSON *set, const char *id)
{
	if (id && !in(set, id))
		cJSON_AddTrueToObject(set, id);
}

static void keep(void *set, const char *id)
{
	mark(set, id);
}

static struct {
	templates_layer_keeper fn;
	void *ctx;
} keepers[4];

void templates_stack_add_keeper(templates_layer_keeper fn, void *ctx)
{
	for (size_t i = 0; i < sizeof keepers / sizeof keepers[0]; i++)
		if (!keepers[i].fn) {
			keepers[i].fn = fn;
			keepers[i].ctx = ctx;
			return;
		}
}

/* Every layer a build (ready or running), a sandbox or another keeper (a
 * snapshot of a template's sandbox) stands on. */
static cJSON *in_use(void)
{
	cJSON *set = cJSON_CreateObject();
	if (!set)
		return NULL;
	for (size_t i = 0; i < sizeof keepers / sizeof keepers[0] && keepers[i].fn; i++)
		keepers[i].fn(keepers[i].ctx, keep, set);
	for (const struct template *t = g.catalog->head; t; t = t->next) {
		for (const struct template_build *b = t->builds; b; b = b->next) {
			const cJSON *id;
			if (b->status != BUILD_ERROR)
				cJSON_ArrayForEach(id, b->config.layers)
					mark(set, cJSON_GetStringValue(id));
		}
	}
	for (size_t i = 0; i < registry_count(g.reg); i++) {
		const struct sandbox *sb = registry_at(g.reg, i);
		for (size_t k = 0; k < sb->layer_count; k++) {
			for (size_t j = 0; j < store_layers_count(); j++) {
				const struct store_layer *l = store_layers_at(j);
				if (strcmp(l->root, sb->layers[k]) == 0)
					mark(set, l->id);
			}
		}
	}
	return set;
}

static void collect(evutil_socket_t fd, short what, void *arg)
{
	(void)fd, (void)what, (void)arg;
	cJSON *used = in_use();
	if (!used)
		return;
	for (size_t j = store_layers_count(); j-- > 0;) {
		const struct store_layer *l = store_layers_at(j);
		bool ours = strcmp(l->origin, TEMPLATES_ORIGIN_STEP) == 0 ||
			strcmp(l->origin, TEMPLATES_ORIGIN_BASE) == 0 ||
			strcmp(l->origin, TEMPLATES_ORIGIN_LEGACY_BASE) == 0 ||
			strcmp(l->origin, TEMPLATES_ORIGIN_IMAGE) == 0 ||
			strcmp(l->origin, TEMPLATES_ORIGIN_SQUASH) == 0;
		if (ours && !in(used, l->id) && store_layer_remove(l->id, NULL, NULL) != 0)
			fprintf(stderr, "e2b-local-backend: cannot remove layer %s: %s\n", l->id,
				strerror(errno));
	}
	cJSON_Delete(used);
}

int templates_stack_init(struct event_base *base, struct templates *catalog, struct registry *reg)
{
	g.catalog = catalog;
	g.reg = reg;
	g.collect = evtimer_new(base, collect, NULL);
	return g.collect ? 0 : -1;
}

void templates_stack_shutdown(void)
{
	if (g.collect)
		event_free(g.collect);
	memset(&g, 0, sizeof g);
	memset(keepers, 0, sizeof keepers);
}

void templates_stack_collect_soon(void)
{
	struct timeval now = {0, 0};
	if (g.collect)
		evtimer_add(g.collect, &now);
}
