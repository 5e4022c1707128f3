/* Deleting a directory tree completely (see tree_remove.c). */
#ifndef E2B_BACKEND_TREE_REMOVE_H
#define E2B_BACKEND_TREE_REMOVE_H

/* Removes path and everything below it, never following symbolic links,
 * at any depth, clearing immutable/append-only flags on the way. A missing
 * path is not an error. 0 ok, -1 when something remained. */
int tree_remove(const char *path);
/* The same for name in the directory dirfd (AT_FDCWD: the working one). */
int tree_remove_at(int dirfd, const char *name);

#endif
