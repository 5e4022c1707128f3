/* Kernel-confined path resolution inside a sandbox root (see fs_path.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_path.h"

#include "registry/registry.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_users.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int fs_user_lookup(const struct sandbox *sb, const char *name, struct fs_user *u)
{
	if (!name || !*name)
		name = registry_default_user(sb);
	const char *workdir = sb->default_workdir ? sb->default_workdir : "";
	if (strlen(name) >= sizeof u->name || strlen(workdir) >= sizeof u->workdir)
		return -1;
	snprintf(u->workdir, sizeof u->workdir, "%s", workdir);
	uid_t uid;
	gid_t gid;
	if (runtime_user_by_name(sb, name, &uid, &gid, u->home, sizeof u->home) != 0)
		return -1;
	u->host_uid = runtime_host_id(sb, uid);
	u->host_gid = runtime_host_id(sb, gid);
	snprintf(u->name, sizeof u->name, "%s", name);
	if (!u->home[0])
		snprintf(u->home, sizeof u->home, "/");
	return 0;
}

void fs_clean(char *path)
{
	/* Components are copied one by one; ".." pops the last one kept. */
	const char *in = path;
	size_t kept = 1;
	while (*in) {
		while (*in == '/')
			in++;
		const char *end = in + strcspn(in, "/");
		size_t n = (size_t)(end - in);
		if (n == 0 || (n == 1 && in[0] == '.')) {
			/* nothing */
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (kept > 1 && path[kept - 1] != '/')
				kept--;
			if (kept > 1)
				kept--;
		} else {
			if (kept > 1)
				path[kept++] = '/';
			memmove(path + kept, in, n);
			kept += n;
		}
		in = end;
	}
	path[0] = '/';
	path[kept] = '\0';
}

int fs_expand(const char *path, const struct fs_user *u, char *out, size_t cap)
{
	const char *rest;
	const char *base;
	if (!path[0] && u->workdir[0])
		path = u->workdir;
	if (path[0] == '/') {
		base = "";
		rest = path;
	} else if (path[0] == '~') {
		if (path[1] && path[1] != '/')
			return -1;
		base = u->home;
		rest = path + 1;
	} else {
		base = u->home;
		rest = path;
	}
	int n = snprintf(out, cap, "%s/%s", base, rest);
	if (n < 0 || (size_t)n >= cap)
		return -1;
	fs_clean(out);
	return 0;
}

static int openat2_call(int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve)
{
	struct open_how how = {.flags = (unsigned long long)flags | O_CLOEXEC,
		.mode = mode,
		.resolve = resolve};
	if (!(flags & (O_CREAT | O_TMPFILE)))
		how.mode = 0;
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
	return (int)fd;
}

int fs_root_open(const struct sandbox *sb)
{
	const char *root = runtime_rootfs(sb);
	if (!root) {
		errno = ENOENT;
		return -1;
	}
	return open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int fs_open(int root_fd, const char *path, int flags, mode_t mode, bool nofollow)
{
	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	if (nofollow)
		flags |= O_NOFOLLOW;
	return openat2_call(root_fd, path, flags, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

int fs_open_parent(int root_fd, const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash[1] == '\0') {
		*leaf = ".";
		return fs_open(root_fd, "/", O_PATH | O_DIRECTORY, 0, false);
	}
	char parent[FS_PATH_MAX];
	size_t n = (size_t)(slash - path);
	if (n >= sizeof parent) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(parent, path, n);
	parent[n] = '\0';
	*leaf = slash + 1;
	return fs_open(root_fd, n ? parent : "/", O_PATH | O_DIRECTORY, 0, false);
}

int fs_mkdir_all(int root_fd, const char *path, uid_t uid, gid_t gid)
{
	char prefix[FS_PATH_MAX];
	size_t len = strlen(path);
	if (len >= sizeof prefix) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int dir = fs_open(root_fd, "/", O_PATH | O_DIRECTORY, 0, false);
	size_t i = 0;
	while (dir >= 0) {
		while (path[i] == '/')
			i++;
		if (!path[i])
			break;
		size_t end = i + strcspn(path + i, "/");
		char comp[NAME_MAX + 1];
		if (end - i > NAME_MAX) {
			close(dir);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, path + i, end - i);
		comp[end - i] = '\0';
		if (mkdirat(dir, comp, 0755) == 0) {
			if (fchownat(dir, comp, uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
				close(dir);
				return -1;
			}
		} else if (errno != EEXIST) {
			close(dir);
			return -1;
		}
		close(dir);
		memcpy(prefix, path, end);
		prefix[end] = '\0';
		/* From the root again, so a symlinked component stays confined. */
		dir = fs_open(root_fd, prefix, O_PATH | O_DIRECTORY, 0, false);
		i = end;
	}
	if (dir < 0)
		return -1;
	close(dir);
	return 0;
}

void fs_proc_path(int fd, char *out, size_t cap)
{
	snprintf(out, cap, "/proc/self/fd/%d", fd);
}

static int host_path(int fd, char *out, size_t cap)
{
	char link[64];
	fs_proc_path(fd, link, sizeof link);
	ssize_t n = readlink(link, out, cap - 1);
	if (n < 0 || (size_t)n >= cap - 1)
		return -1;
	out[n] = '\0';
	return 0;
}

int fs_fd_path(int root_fd, int fd, char *out, size_t cap)
{
	char root[FS_PATH_MAX], full[FS_PATH_MAX];
	if (host_path(root_fd, root, sizeof root) != 0 || host_path(fd, full, sizeof full) != 0)
		return -1;
	size_t rn = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (strncmp(full, root, rn) != 0 || (full[rn] != '/' && full[rn] != '\0'))
		return -1;
	snprintf(out, cap, "%s", full[rn] ? full + rn : "/");
	return 0;
}
