/* Squashing a build's stack (templates_squash.h). */
#include "templates/templates_squash.h"

#include "lib/clock.h"
#include "lib/err.h"
#include "lib/sha256.h"
#include "store/store_layers.h"
#include "store/store_squash.h"
#include "templates/templates_build.h"
#include "templates/templates_stack.h"
#include "templates/templates_steps.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct squash {
	struct squash *next;
	cJSON *layers;
	int depth;
	int64_t started_ms;
	templates_squash_done done;
	void *ctx;
};
static struct squash *running; /* for templates_squash_cancel */

bool templates_squash_due(const cJSON *layers, bool at_end)
{
	int n = cJSON_GetArraySize(layers);
	return at_end ? n > TEMPLATES_STACK_MAX : n >= TEMPLATES_STACK_MAX;
}

void templates_squash_id(const cJSON *layers, char id[STORE_NAME_MAX + 1])
{
	uint8_t d[SHA256_DIGEST_LEN];
	char *all = cJSON_PrintUnformatted(layers);
	/* Out of memory: an id no layer has (the squash then fails to start). */
	sha256(all ? all : "", all ? strlen(all) : 0, d);
	free(all);
	int n = snprintf(id, STORE_NAME_MAX + 1, "squash-");
	for (size_t i = 0; i < sizeof d; i++)
		n += snprintf(id + n, STORE_NAME_MAX + 1 - (size_t)n, "%02x", d[i]);
}

/* [bottom, ..., top] becomes [bottom, id]. */
static int replace(cJSON *layers, const char *id)
{
	while (cJSON_GetArraySize(layers) > 1)
		cJSON_DeleteItemFromArray(layers, 1);
	return cJSON_AddItemToArray(layers, cJSON_CreateString(id)) ? 0 : -1;
}

static void merged(void *ctx, const struct store_layer *layer, const struct err *err)
{
	struct squash *q = ctx;
	struct err no_memory;
	char line[400];
	for (struct squash **pp = &running; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	if (layer && replace(q->layers, layer->id) != 0) {
		err_set(&no_memory, 0, "out of memory");
		err = &no_memory;
	}
	if (layer && !err) {
		snprintf(line, sizeof line,
			"Stack of %d layers squashed: layers 2 to %d merged into %s (%.1f MiB) "
			"in %lld ms",
			q->depth, q->depth, layer->id, (double)layer->size / (1 << 20),
			(long long)(clock_now_ms() - q->started_ms));
		templates_stack_collect_soon(); /* the layers it replaced may be unused now */
	}
	q->done(q->ctx, err, err ? NULL : line);
	free(q);
}

int templates_squash_start(struct event_base *base, cJSON *layers, templates_squash_done done, void *ctx,
	struct err *err)
{
	char id[STORE_NAME_MAX + 1];
	int n = cJSON_GetArraySize(layers);
	templates_squash_id(layers, id);
	if (store_layer_find(id)) {
		char line[300];
		snprintf(line, sizeof line, "Stack of %d layers squashed: %s, in the store already", n, id);
		if (replace(layers, id) != 0) {
			err_set(err, 0, "out of memory");
			return -1;
		}
		done(ctx, NULL, line);
		return 0;
	}
	const char **ids = calloc((size_t)n, sizeof *ids);
	struct squash *q = calloc(1, sizeof *q);
	int rc = -1;
	for (int i = 0; ids && i < n; i++)
		ids[i] = cJSON_GetStringValue(cJSON_GetArrayItem(layers, i));
	if (ids && q) {
		*q = (struct squash){.layers = layers,
			.depth = n,
			.started_ms = clock_now_ms(),
			.done = done,
			.ctx = ctx};
		rc = store_squash_start(base, ids, (size_t)n, id, TEMPLATES_ORIGIN_SQUASH, merged, q);
	}
	if (rc == 0) {
		q->next = running;
		running = q;
	}
	if (rc != 0) {
		err_set(err, errno, "%s", ids && q ? strerror(errno) : "out of memory");
		free(q);
	}
	free(ids);
	return rc;
}

void templates_squash_cancel(void *ctx)
{
	for (struct squash *q = running; q; q = q->next)
		if (q->ctx == ctx)
			store_squash_cancel(q);
}

/* The steps walked ahead, in the build's log as a cached build has them. */
static void log_ahead(struct template_build *b, const cJSON *steps, int i, int next, const char *merged)
{
	for (int k = i; k < next; k++) {
		const cJSON *s = cJSON_GetArrayItem(steps, k);
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "type"));
		char args[600], name[16];
		templates_steps_describe(s, args, sizeof args);
		snprintf(name, sizeof name, "%d", k + 1);
		build_log(b, "info", name, "%s[builder %d/%d] %s%s", strcmp(type, "ENV") ? "CACHED " : "",
			k + 1, cJSON_GetArraySize(steps), type, args);
	}
	build_log(b, "info", NULL, "Stack squashed: %s, in the store already", merged);
}

bool templates_squash_ahead(const cJSON *steps, int i, bool force, struct template_config *cfg,
	struct template_build *b, int *next)
{
	struct template_config c;
	bool found = false;
	if (force || build_config_copy(&c, cfg) != 0)
		return false;
	for (int k = i; k < cJSON_GetArraySize(steps); k++) {
		const cJSON *s = cJSON_GetArrayItem(steps, k);
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "type"));
		if (strcmp(type, "ENV") == 0) {
			if (templates_steps_apply(&c, s) != 0)
				break;
			continue;
		}
		if (templates_squash_due(c.layers, false)) {
			char id[STORE_NAME_MAX + 1];
			templates_squash_id(c.layers, id);
			found = store_layer_find(id) && replace(c.layers, id) == 0;
			*next = k;
			break;
		}
		if (strcmp(type, "USER") == 0 || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "force")))
			break;
		char key[TEMPLATES_KEY_LEN + 1];
		templates_stack_key(c.layers, s, &c, key);
		if (!cJSON_AddItemToArray(c.layers, cJSON_CreateString(key)) ||
			templates_steps_apply(&c, s) != 0)
			break;
	}
	if (found) {
		log_ahead(b, steps, i, *next, cJSON_GetStringValue(cJSON_GetArrayItem(c.layers, 1)));
		build_config_clear(cfg);
		*cfg = c;
	} else {
		build_config_clear(&c);
	}
	return found;
}
