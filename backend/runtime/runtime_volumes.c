/* Mounting volumes into a sandbox (runtime_volumes.h). */
#define _GNU_SOURCE
#include "runtime/runtime_volumes.h"

#include "lib/err.h"
#include "lib/text.h"
#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_state.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

char *runtime_volumes_data_dir(const char *volume_id)
{
	for (const char *c = volume_id; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return NULL;
	if (!volume_id[0] || !runtime_self()->state_root)
		return NULL;
	return text_printf("%s/volumes/%s/data", runtime_self()->state_root, volume_id);
}

static int open_beneath(int root_fd, const char *path)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, root_fd, path[0] ? path : ".", &how, sizeof how);
}

/* The directory path (absolute inside the sandbox) beneath root_fd, made
 * with its missing parents (owned by the sandbox's root): an O_PATH
 * descriptor, or -1 with errno. */
static int make_mount_point(int root_fd, const char *path, uid_t owner)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	size_t len = strlen(buf);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char saved = buf[i];
		buf[i] = '\0';
		int fd = open_beneath(root_fd, buf);
		if (fd < 0 && errno == ENOENT) {
			char *slash = strrchr(buf, '/');
			*slash = '\0';
			int parent = open_beneath(root_fd, buf);
			*slash = '/';
			if (parent < 0)
				return -1;
			int rc = mkdirat(parent, slash + 1, 0755);
			if (rc == 0)
				rc = fchownat(parent, slash + 1, owner, owner, AT_SYMLINK_NOFOLLOW);
			close(parent);
			if (rc != 0 && errno != EEXIST)
				return -1;
			fd = open_beneath(root_fd, buf);
		}
		buf[i] = saved;
		if (fd < 0)
			return -1;
		if (saved == '\0')
			return fd;
		close(fd);
	}
	errno = EINVAL;
	return -1;
}

static int mount_one(struct sandbox *sb, const char *volume_id, const char *path)
{
	struct sandbox_rt *rt = sb->rt;
	char *source = runtime_volumes_data_dir(volume_id);
	if (!source) {
		errno = EINVAL;
		return -1;
	}
	int tree = open_tree(AT_FDCWD, source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	free(source);
	int userns = runtime_self()->mode == ISOLATION_FULL ? runtime_ids_userns(&rt->ids) : -1;
	int rc = tree < 0 || (runtime_self()->mode == ISOLATION_FULL && userns < 0) ? -1 : 0;
	if (rc == 0 && userns >= 0) {
		struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP,
			.userns_fd = (unsigned long long)userns};
		rc = mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr);
	}
	int target = rc == 0 ? make_mount_point(rt->root_fd, path, rt->ids.base) : -1;
	if (target < 0)
		rc = -1;
	if (rc == 0)
		rc = move_mount(tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	int e = errno;
	if (tree >= 0)
		close(tree);
	if (target >= 0)
		close(target);
	errno = e;
	return rc;
}

int runtime_volumes_mount(struct sandbox *sb, struct err *err)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, sb->volume_mounts) {
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "volumeID"));
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "path"));
		if (!id || !path || mount_one(sb, id, path) != 0)
			return err_set(err, 500, "cannot mount volume %s at %s: %s", id ? id : "?",
				path ? path : "?", strerror(errno));
	}
	return 0;
}
