/* Paths inside a sandbox's root filesystem, resolved by the kernel.
 *
 * Every lookup goes through openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
 * from a descriptor of the sandbox's "/", so ".." and symlinks (absolute or
 * relative) are confined to that root: nothing a sandbox contains can make
 * the backend touch a host file. Operations on a last component
 * (mkdirat, renameat, unlinkat, fstatat without following) are done
 * relative to the resolved parent's descriptor.
 *
 * Users are the sandbox's own accounts (runtime/runtime_users.h); paths are
 * expanded against the user's home and the sandbox's default workdir the
 * way envd's ExpandAndResolve does. */
#ifndef E2B_BACKEND_FS_PATH_H
#define E2B_BACKEND_FS_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox;

#define FS_PATH_MAX 4096

struct fs_user {
	uid_t host_uid; /* what the backend chowns the user's new files to (runtime_host_id) */
	gid_t host_gid;
	char name[64];
	char home[FS_PATH_MAX];
	/* The sandbox's default workdir (envd's, whoever the user is), "" none:
	 * where an empty path leads instead of home. */
	char workdir[FS_PATH_MAX];
};

/* The named account; NULL or "" names the sandbox's default user
 * (registry_default_user: its template's). 0, or -1 when the sandbox has
 * no such user. */
int fs_user_lookup(const struct sandbox *sb, const char *name, struct fs_user *u);

/* Go's filepath.Clean for an absolute path, in place. */
void fs_clean(char *path);

/* envd's ExpandAndResolve: an empty path is the default workdir when the
 * sandbox has one; "~" and "~/x" against home, absolute paths literally,
 * relative ones joined to home (not to the workdir); the result is
 * cleaned. -1 for "~other" or overflow. */
int fs_expand(const char *path, const struct fs_user *u, char *out, size_t cap);

/* A descriptor of the sandbox's "/" (O_PATH|O_DIRECTORY), or -1 (errno). */
int fs_root_open(const struct sandbox *sb);

/* openat2 of an absolute sandbox path below root_fd, confined to it.
 * nofollow: the last component is not followed (O_NOFOLLOW). -1 with errno. */
int fs_open(int root_fd, const char *path, int flags, mode_t mode, bool nofollow);

/* The parent directory of path (O_PATH|O_DIRECTORY) and a pointer to the
 * last component inside path ("." for "/"). -1 with errno. */
int fs_open_parent(int root_fd, const char *path, const char **leaf);

/* MkdirAll: every missing directory of path is made (0755) and given to
 * uid:gid. 0, or -1 with errno (ENOTDIR when a component is a file). */
int fs_mkdir_all(int root_fd, const char *path, uid_t uid, gid_t gid);

/* The sandbox path of an open descriptor (its host path with the root's
 * host path removed), or -1. */
int fs_fd_path(int root_fd, int fd, char *out, size_t cap);

/* "/proc/self/fd/N", for calls that only take paths (inotify, xattrs). */
void fs_proc_path(int fd, char *out, size_t cap);

#endif
