/* envd's Remove (os.RemoveAll) inside a sandbox root, done in slices on the
 * event loop: at most FS_REMOVE_SLICE directory entries per turn, so a huge
 * tree never stalls other requests. Symbolic links are removed, never
 * followed; a missing path is not an error. */
#ifndef E2B_BACKEND_FS_REMOVE_H
#define E2B_BACKEND_FS_REMOVE_H

struct event_base;
struct evhttp_request;

#define FS_REMOVE_SLICE 2000

/* done(arg, 0) on success or done(arg, errno) runs exactly once, from the
 * loop (never from inside this call). 0 when started, -1 (errno) when not. */
int fs_remove_start(struct event_base *base, int root_fd, const char *path, void (*done)(void *arg, int err),
	void *arg);

/* Answers the request of a removal that has ended (err 0 or an errno):
 * the status sent. */
typedef int (*fs_remove_answer)(struct evhttp_request *req, const char *path, int err);
/* fs_remove_start for a request, which waits meanwhile (http_parked.h):
 * once the removal has ended, answer replies and the reply is logged under
 * server ("api", "envd"), unless the client has gone (the removal goes on
 * regardless). 0 when started; -1 when not (req is the caller's to answer). */
int fs_remove_for_request(struct event_base *base, int root_fd, const char *path, struct evhttp_request *req,
	const char *server, fs_remove_answer answer);

#endif
