/* The store's work off the event loop: a forked helper runs one job
 * (sealing a layer, deleting one) and the loop hears of its end through a
 * pipe, as sandboxes are removed (runtime_remove.h). The helper dies with
 * the backend (PR_SET_PDEATHSIG): what it leaves half-made lies in a .tmp-*
 * directory the next start removes. Calls lib/ and libevent. */
#ifndef E2B_BACKEND_STORE_HELPER_H
#define E2B_BACKEND_STORE_HELPER_H

#include <stddef.h>

struct err;
struct event_base;

/* Runs in the helper: 0 ok, else -1 with err filled in. */
typedef int (*store_helper_job)(void *arg, struct err *err);
/* Runs on the loop once the helper has exited: err NULL when the job
 * succeeded, else what went wrong (the job's status and message, the
 * message cut to 399 bytes; status 0 for a helper that died first). */
typedef void (*store_helper_done)(void *ctx, const struct err *err);

/* Forks a helper named name (at most 15 characters) that runs job(arg).
 * 0 ok (done will be called), -1 with errno (it will not). */
int store_helper_run(struct event_base *base, const char *name, store_helper_job job, void *arg,
	store_helper_done done, void *ctx);
/* Kills the helper started with ctx and whatever it started (its process
 * group); its done still runs, with an error, once it has exited. 0 ok, -1
 * with ESRCH when no helper has that ctx. */
int store_helper_kill(void *ctx);
/* Blocks until every helper has exited, calling their done. */
void store_helper_wait_all(void);

#endif
