/* One pool of the warm set (warm.h): a shape (template, stack of layers,
 * resources) and the started sandboxes kept for it. Data only: the refill
 * (warm.c) makes them. */
#ifndef E2B_BACKEND_WARM_POOL_H
#define E2B_BACKEND_WARM_POOL_H

#include "registry/registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct warm_pool {
	struct sandbox_spec shape; /* template_id, layers and resources: the pool's own copies */
	char *template_id;
	char **layers;
	size_t size;            /* how many it keeps ready */
	struct sandbox **ready; /* started, attached, nobody's: taken from the end */
	size_t nready;
	size_t nflight;    /* being made for it */
	const void *start; /* its template's start command (warm_starter), or NULL */
	size_t nstarting;  /* made, their start command not ready yet */
	int64_t used_ms;   /* its last take (or its making) */
	bool standing;     /* the default shape's: never dropped */
	bool dropped;      /* no longer taken from or filled; freed once nothing is in flight */
};

/* A pool of size for shape's template, layers and resources (copied) and
 * start (not copied: it outlives the pool); NULL out of memory. */
struct warm_pool *warm_pool_new(const struct sandbox_spec *shape, const void *start, size_t size,
	bool standing);
/* Whether a create of spec may claim one of p's: the same template, stack
 * and resources, and no volumes (a claim gives everything else). */
bool warm_pool_fits(const struct warm_pool *p, const struct sandbox_spec *spec);
/* How many more it wants started now: 0 once dropped, and while one is
 * on its way for a pool whose sandboxes run a start command. */
size_t warm_pool_short(const struct warm_pool *p);
/* Discards the ready ones and frees p (nothing may be in flight for it). */
void warm_pool_free(struct warm_pool *p, struct registry *reg);

#endif
