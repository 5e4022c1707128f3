/* One pool of the warm set (warm_pool.h). */
#include "warm/warm_pool.h"

#include "lib/clock.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

struct warm_pool *warm_pool_new(const struct sandbox_spec *shape, const void *start, size_t size,
	bool standing)
{
	struct warm_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->start = start;
	p->size = size;
	p->standing = standing;
	p->used_ms = clock_now_ms();
	p->shape = (struct sandbox_spec){.template_id = NULL,
		.cpu_count = shape->cpu_count,
		.memory_mb = shape->memory_mb,
		.disk_size_mb = shape->disk_size_mb,
		.timeout_s = 1};
	p->shape.template_id = p->template_id = strdup(shape->template_id);
	p->ready = calloc(size ? size : 1, sizeof *p->ready);
	p->layers = calloc(shape->layer_count ? shape->layer_count : 1, sizeof *p->layers);
	bool made = p->template_id && p->ready && p->layers;
	for (size_t i = 0; made && i < shape->layer_count; i++, p->shape.layer_count++)
		made = (p->layers[i] = strdup(shape->layers[i])) != NULL;
	p->shape.layers = (const char *const *)p->layers;
	if (!made) {
		warm_pool_free(p, NULL);
		return NULL;
	}
	return p;
}

bool warm_pool_fits(const struct warm_pool *p, const struct sandbox_spec *spec)
{
	if (p->dropped || strcmp(spec->template_id, p->shape.template_id) != 0 ||
		spec->layer_count != p->shape.layer_count || cJSON_GetArraySize(spec->volume_mounts) != 0 ||
		spec->cpu_count != p->shape.cpu_count || spec->memory_mb != p->shape.memory_mb ||
		spec->disk_size_mb != p->shape.disk_size_mb)
		return false;
	for (size_t i = 0; i < spec->layer_count; i++)
		if (strcmp(spec->layers[i], p->layers[i]) != 0)
			return false;
	return true;
}

size_t warm_pool_short(const struct warm_pool *p)
{
	size_t have = p->nready + p->nflight + p->nstarting;
	if (p->dropped || have >= p->size)
		return 0;
	/* A start command (a server, a kernel) takes seconds of CPU: one
	 * comes up at a time, beside the creates in use. */
	if (p->start && p->nflight + p->nstarting > 0)
		return 0;
	return p->size - have;
}

void warm_pool_free(struct warm_pool *p, struct registry *reg)
{
	if (!p)
		return;
	while (reg && p->nready > 0)
		registry_discard(reg, p->ready[--p->nready]);
	for (size_t i = 0; p->layers && i < p->shape.layer_count; i++)
		free(p->layers[i]);
	free(p->layers);
	free(p->ready);
	free(p->template_id);
	free(p);
}
