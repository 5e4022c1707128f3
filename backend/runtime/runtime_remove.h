/* Removing a sandbox: its processes are killed and a cleaner thread
 * unmounts and deletes its overlay, disk, directory and cgroups off the
 * event loop. Calls runtime_cgroup.c, runtime_disk.c, runtime_overlay.c and
 * lib/. */
#ifndef E2B_BACKEND_RUNTIME_REMOVE_H
#define E2B_BACKEND_RUNTIME_REMOVE_H

struct sandbox;
struct sandbox_rt;

/* Kills every process of the sandbox and removes its directory, cgroups and
 * mount off the event loop (the cleaner thread). sb->dir is gone afterwards,
 * as far as the caller is concerned. */
void runtime_sandbox_remove(struct sandbox *sb);
/* Stops the sandbox but keeps it (persistence: the backend stops, or an
 * adopted sandbox failed to start): its processes are killed, its cgroups
 * removed, its overlay and disk unmounted with what was written kept; its
 * directory, disk image and id range stay. Blocking (a few unmounts). It is
 * cold afterwards (runtime_sandbox_cold), as if adopted. */
void runtime_sandbox_stop(struct sandbox *sb);
/* Blocks until every cleaner has finished. */
void runtime_wait_cleaners(void);
/* Frees a sandbox's runtime state (descriptors, cgroup paths). */
void runtime_state_free(struct sandbox_rt *rt);
/* A new state's descriptors, all -1 (none open yet); and closing every one
 * open (each then -1): the sandbox's processes are being killed, and
 * nothing of the backend may keep its mounts or namespaces alive. */
void runtime_state_no_fds(struct sandbox_rt *rt);
void runtime_state_close_fds(struct sandbox_rt *rt);

#endif
