/* warm/ — sandboxes started before anyone asks: a few of the default shape
 * (the template "base", the default resources, no volumes, open network),
 * kept running but nobody's, so a create of that shape only claims one
 * (registry_claim) and the next is started behind it, off the request's
 * path: its long steps (cgroups, overlay, the init's clone, its veth and
 * relay sockets) on a worker thread (lib/worker.h), the rest in short steps
 * at the loop's lowest priority, and the init's own mounts in its process
 * at nice 19; so requests in flight go first and the claimed sandbox's
 * first command does not wait behind the refill. Two are made at once: the
 * worker builds the next while the last one's init mounts its root.
 * Owns: the pool, its refill timer and its worker.
 * May call: registry/ (launch, claim, discard), net/ (attach), runtime/
 * (the build and the init's report pipe) and lib/. Called by main.c and api/ (create). */
#ifndef E2B_BACKEND_WARM_H
#define E2B_BACKEND_WARM_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct registry;
struct sandbox;
struct sandbox_spec;

#define WARM_DEFAULT_SIZE 2
#define WARM_MAX_SIZE 64
/* Its steps run at this libevent priority, the lowest: main.c gives the
 * base WARM_PRIORITY + 1 levels (everything else runs at 1, the default). */
#define WARM_PRIORITY 2

struct warm;

/* A pool of size sandboxes shaped like shape (its template_id and
 * resources; copied). NULL when size is 0, without isolation (a create costs
 * nothing to warm there), with fewer than 64 id ranges (--id-range: the pool
 * would hold those the creates need), or out of memory. Starts filling with
 * the loop's first pass. */
struct warm *warm_new(struct event_base *base, struct registry *reg, const struct sandbox_spec *shape,
	size_t size);
/* A started sandbox for spec, when spec has the pool's shape and one is
 * ready: the caller claims it (registry_claim) or gives it back with
 * registry_discard. NULL otherwise (create it the usual way). */
struct sandbox *warm_take(struct warm *w, const struct sandbox_spec *spec);
/* How many are ready, and the pool's size (GET /health). */
size_t warm_ready(const struct warm *w);
size_t warm_size(const struct warm *w);
/* Removes every pooled sandbox (before the registry goes). NULL is fine. */
void warm_free(struct warm *w);

#endif
