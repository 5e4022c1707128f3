/* The state directory's lock: <state-dir>/lock, an flock held for the
 * backend's whole life, so that two backends never share one state
 * directory (they would remove each other's sandboxes and records). The
 * kernel drops it when the backend dies, however it dies. Calls only the
 * kernel. */
#ifndef E2B_BACKEND_STORE_LOCK_H
#define E2B_BACKEND_STORE_LOCK_H

#include <stddef.h>

struct err;

/* Takes <state_root>/lock (made when missing) and writes this process's pid
 * into it (pid: the machine's, for the message a second backend prints).
 * Returns the lock's descriptor (close-on-exec; closing it releases the
 * lock), or -1 with err filled in: "state directory DIR is in use by another
 * backend (pid N)" when another process holds it. */
int store_lock_take(const char *state_root, int pid, struct err *err);

#endif
