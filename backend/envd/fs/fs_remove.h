/* envd's Remove (os.RemoveAll) inside a sandbox root, done in slices on the
 * event loop: at most FS_REMOVE_SLICE directory entries per turn, so a huge
 * tree never stalls other requests. Symbolic links are removed, never
 * followed; a missing path is not an error. */
#ifndef E2B_BACKEND_FS_REMOVE_H
#define E2B_BACKEND_FS_REMOVE_H

struct event_base;

#define FS_REMOVE_SLICE 2000

/* done(arg, 0) on success or done(arg, errno) runs exactly once, from the
 * loop (never from inside this call). 0 when started, -1 (errno) when not. */
int fs_remove_start(struct event_base *base, int root_fd, const char *path,
	void (*done)(void *arg, int err), void *arg);

#endif
