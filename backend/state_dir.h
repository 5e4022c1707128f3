/* The backend's state directory on disk: its lock (store/store_lock.h),
 * <state-dir>/sandboxes/<id>/ per sandbox, and the store's records/ and
 * layers/ (docs/backend/state.md, "State directory"). */
#ifndef E2B_BACKEND_STATE_DIR_H
#define E2B_BACKEND_STATE_DIR_H

#include <stdbool.h>

struct state_dir {
	char *root;          /* absolute path */
	char *sandboxes;     /* root + "/sandboxes" */
	bool owns_root;      /* made by mkdtemp: removed entirely on exit */
	bool owns_sandboxes; /* "sandboxes" was made by us: rmdir'd on exit */
	int lock_fd;         /* <root>/lock, held until state_dir_close */
};

/* requested NULL: mkdtemp under $TMPDIR (default /tmp). Otherwise use (and
 * create if missing) that directory, and lock it first: a directory another
 * backend holds is refused. 0 on success; -1 with a message on stderr. */
int state_dir_open(struct state_dir *sd, const char *requested);

/* Removes what state_dir_open created and frees the paths. */
void state_dir_close(struct state_dir *sd);

/* Deletes a directory tree without following symbolic links, so a link a
 * sandbox process planted cannot redirect the deletion outside the tree.
 * A missing path is not an error. 0 on success, -1 otherwise. */
int state_dir_remove_tree(const char *path);

#endif
