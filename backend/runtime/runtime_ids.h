/* The host ids of the sandboxes: each sandbox runs in a user namespace that
 * maps its ids 0..65535 onto a range of host ids of its own, so a sandbox's
 * root is not host root and the kernel's per-uid counts (keys, inotify
 * instances) are each sandbox's own.
 *
 * With --isolation full the ranges come from a pool (--id-range START:COUNT,
 * default 1073741824:268435456, i.e. 4096 ranges of 65536), checked at start
 * not to overlap /etc/subuid or /etc/subgid. A range is taken when a sandbox
 * starts and given back once its cleaner has finished; a lock file
 * (/run/e2b-local-backend.ids, one byte-range lock per range) keeps two
 * backends on one machine from handing out the same range. Rootless, every
 * sandbox shares the one range the backend's own namespace has (its
 * subordinate ids, or a single id).
 *
 * Calls runtime_userns.c (the idmap namespaces it keeps per range). */
#ifndef E2B_BACKEND_RUNTIME_IDS_H
#define E2B_BACKEND_RUNTIME_IDS_H

#include <stdbool.h>
#include <stddef.h>

struct err;
#include <sys/types.h>

#define RUNTIME_IDS_PER_SANDBOX 65536UL
#define RUNTIME_IDS_DEFAULT_START 1073741824UL /* 2^30: above useradd's subordinate ids */
#define RUNTIME_IDS_DEFAULT_COUNT 268435456UL  /* 2^28: 4096 sandboxes */
#define RUNTIME_IDS_LOCK_FILE "/run/e2b-local-backend.ids"

/* A sandbox's ids: in-sandbox id X is host id base + X for X < count
 * ("host" meaning the backend's own user namespace, which rootless is not the
 * machine's). slot is the pool's range, -1 for a shared one. */
struct runtime_ids {
	int slot;
	uid_t base;
	unsigned long count;
};

/* --id-range START:COUNT (before runtime_init): 0 ok, -1 with the reason in
 * err (status EINVAL). NULL keeps the default. */
int runtime_ids_configure(const char *spec, struct err *err);
/* Full isolation: checks the range against /etc/subuid and /etc/subgid and
 * opens the lock file. 0, or -1 with err (status an errno). */
int runtime_ids_init_pool(struct err *err);
/* Rootless: every sandbox gets the same range. */
void runtime_ids_init_shared(uid_t base, unsigned long count);
/* Takes a free range: 0 ok, -1 when every range is in use. */
int runtime_ids_take(struct runtime_ids *ids);
/* Takes the range starting at base again (a sandbox kept from an earlier
 * run: its files on disk carry those ids). -1 with errno: ERANGE outside
 * the pool, EBUSY taken. */
int runtime_ids_take_base(uid_t base, struct runtime_ids *out);
/* id (a host id of any range of the pool) as the same id of range to: the
 * pool's ranges are aligned, so sandbox id X is found whichever range it
 * was in. Ids outside the pool are returned as they are. */
uid_t runtime_ids_rebase(uid_t id, const struct runtime_ids *to);
/* Gives a range back (its sandbox's cleaner has finished). */
void runtime_ids_release(int slot);
/* A user namespace with the range's map, for idmapped mounts (kept per
 * range, owned by the pool): the descriptor, or -1 with errno. */
int runtime_ids_userns(const struct runtime_ids *ids);
/* How many sandboxes can hold a range at once (ULONG_MAX when they share
 * one: rootless). */
unsigned long runtime_ids_ranges(void);
/* The pool's size, for messages: "START:COUNT". */
const char *runtime_ids_describe(void);
void runtime_ids_shutdown(void);

#endif
