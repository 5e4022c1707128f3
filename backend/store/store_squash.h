/* Squashing a stack of layers: the layers above its bottom one merged into
 * one new layer, bottom-up as overlay stacks them (store_shift_merge), so
 * the stack [bottom, l1, ..., ln] becomes [bottom, merged]: a sandbox then
 * mounts two layers where it mounted n + 1, and the bottom layer (a
 * built-in template's rootfs, an image's lowest layer: the big ones) is
 * only looked into, never copied. The merge runs in a forked helper and the
 * layer is published like any other (made in a scratch directory, synced,
 * renamed into place). Calls store_layers.h (scratch directories,
 * publishing), store_shift.h, store_helper.h and lib/. */
#ifndef E2B_BACKEND_STORE_SQUASH_H
#define E2B_BACKEND_STORE_SQUASH_H

#include "store/store_layers.h"

#include <stddef.h>
#include <stdint.h>

struct event_base;

/* Blocking: dst (must not exist) becomes roots[1..n-1] merged in that order
 * as stacked over roots[0] (n >= 2); *bytes: the sizes of its files and
 * links. 0 ok, -1 with err (dst may be left half-made). */
int store_squash_merge(const char *const *roots, size_t n, const char *dst, uint64_t *bytes, struct err *err);

/* On the loop: merges the layers ids[1..n-1] over ids[0] (n >= 2) into a
 * new layer id (its parent ids[0], its origin origin) in a helper; done
 * gets the layer. A layer of that id published meanwhile by another squash
 * is the same tree: done gets that one. 0 ok (done will run), -1 with errno
 * (EINVAL, ENOENT for a layer not in the store, EEXIST for an id in the
 * store already, or the fork's) and done will not. */
int store_squash_start(struct event_base *base, const char *const *ids, size_t n, const char *id,
	const char *origin, store_layer_done done, void *ctx);
/* Stops the squash started with ctx: its helper is killed (the merge is not
 * waited for), and once it has exited done runs with an error and its
 * scratch directory is removed. A layer it had published just before is
 * complete: it stays in the store (the caller's collection finds it). 0
 * ok, -1 with ESRCH when no squash has that ctx. */
int store_squash_cancel(void *ctx);

#endif
