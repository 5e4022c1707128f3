/* Building EntryInfo messages (see fs_entry.h). */
#define _GNU_SOURCE
#include "envd/fs/fs_entry.h"

#include "envd/fs/fs_owners.h"
#include "envd/fs/fs_path.h"
#include "runtime/runtime_users.h"

#include <cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

void fs_mode_string(mode_t mode, char *buf)
{
	/* Go's letters, in its bit order: d a l T L D p S u g c t ? */
	size_t w = 0;
	mode_t fmt = mode & S_IFMT;
	if (fmt == S_IFDIR)
		buf[w++] = 'd';
	if (fmt == S_IFLNK)
		buf[w++] = 'L';
	if (fmt == S_IFBLK || fmt == S_IFCHR)
		buf[w++] = 'D';
	if (fmt == S_IFIFO)
		buf[w++] = 'p';
	if (fmt == S_IFSOCK)
		buf[w++] = 'S';
	if (mode & S_ISUID)
		buf[w++] = 'u';
	if (mode & S_ISGID)
		buf[w++] = 'g';
	if (fmt == S_IFCHR)
		buf[w++] = 'c';
	if (mode & S_ISVTX)
		buf[w++] = 't';
	if (w == 0)
		buf[w++] = '-';
	static const char rwx[] = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		buf[w++] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
	buf[w] = '\0';
}

void fs_rfc3339(const struct timespec *ts, char *buf, size_t cap)
{
	struct tm tm;
	time_t secs = ts->tv_sec;
	gmtime_r(&secs, &tm);
	char base[64], frac[32] = "";
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	long ns = ts->tv_nsec;
	if (ns % 1000000 == 0 && ns)
		snprintf(frac, sizeof frac, ".%03ld", ns / 1000000);
	else if (ns % 1000 == 0 && ns)
		snprintf(frac, sizeof frac, ".%06ld", ns / 1000);
	else if (ns)
		snprintf(frac, sizeof frac, ".%09ld", ns);
	snprintf(buf, cap, "%s%sZ", base, frac);
}

static const char *type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "FILE_TYPE_FILE";
	case S_IFDIR:
		return "FILE_TYPE_DIRECTORY";
	default:
		return NULL; /* envd has no type for devices, pipes, sockets */
	}
}

/* user.e2b.* xattrs of the file behind fd, prefix removed. */
static void add_metadata(cJSON *entry, int fd)
{
	char proc[64], names[4096];
	fs_proc_path(fd, proc, sizeof proc);
	ssize_t n = listxattr(proc, names, sizeof names);
	if (n <= 0)
		return;
	cJSON *meta = NULL;
	size_t plen = strlen(FS_XATTR_PREFIX);
	for (char *k = names; k < names + n; k += strlen(k) + 1) {
		if (strncmp(k, FS_XATTR_PREFIX, plen) != 0)
			continue;
		char value[1024];
		ssize_t vn = getxattr(proc, k, value, sizeof value - 1);
		if (vn < 0)
			continue;
		value[vn] = '\0';
		if (!meta)
			meta = cJSON_AddObjectToObject(entry, "metadata");
		if (meta)
			cJSON_AddStringToObject(meta, k + plen, value);
	}
}

cJSON *fs_entry_info(const struct sandbox *sb, int root_fd, const char *path, const struct fs_owners *owners)
{
	const char *leaf;
	int parent = fs_open_parent(root_fd, path, &leaf);
	if (parent < 0)
		return NULL;
	struct stat lst, st;
	int rc = fstatat(parent, leaf, &lst, AT_SYMLINK_NOFOLLOW);
	int saved = errno;
	close(parent);
	if (rc != 0) {
		errno = saved;
		return NULL;
	}
	cJSON *entry = cJSON_CreateObject();
	if (!entry)
		return NULL;
	const char *name = strrchr(path, '/');
	name = name && name[1] ? name + 1 : path;
	cJSON_AddStringToObject(entry, "name", name);

	st = lst;
	const char *type = type_name(lst.st_mode);
	char target[FS_PATH_MAX];
	bool is_link = S_ISLNK(lst.st_mode);
	/* The target's descriptor (following a last symlink), for metadata. */
	int fd = fs_open(root_fd, path, O_PATH, 0, false);
	if (is_link) {
		if (fd >= 0 && fstat(fd, &st) == 0 && fs_fd_path(root_fd, fd, target, sizeof target) == 0) {
			type = type_name(st.st_mode);
		} else {
			type = NULL; /* broken link: FILE_TYPE_UNSPECIFIED, the link's own text */
			st = lst;
			const char *bleaf;
			int bparent = fs_open_parent(root_fd, path, &bleaf);
			ssize_t tn =
				bparent >= 0 ? readlinkat(bparent, bleaf, target, sizeof target - 1) : -1;
			target[tn > 0 ? tn : 0] = '\0';
			if (bparent >= 0)
				close(bparent);
		}
	}
	if (type)
		cJSON_AddStringToObject(entry, "type", type);
	cJSON_AddStringToObject(entry, "path", path);
	char num[32];
	if (st.st_size) {
		snprintf(num, sizeof num, "%" PRId64, (int64_t)st.st_size);
		cJSON_AddStringToObject(entry, "size", num);
	}
	if (st.st_mode & 0777)
		cJSON_AddNumberToObject(entry, "mode", st.st_mode & 0777);
	char perms[16];
	fs_mode_string(st.st_mode, perms);
	cJSON_AddStringToObject(entry, "permissions", perms);
	/* The ids on disk are the sandbox's as the host sees them. */
	char owner[256];
	uid_t uid = runtime_sandbox_id(sb, st.st_uid), gid = runtime_sandbox_id(sb, st.st_gid);
	if (owners)
		fs_owners_user(owners, uid, owner, sizeof owner);
	else if (runtime_user_name(sb, uid, owner, sizeof owner) != 0)
		snprintf(owner, sizeof owner, "%u", (unsigned)uid);
	cJSON_AddStringToObject(entry, "owner", owner);
	if (owners)
		fs_owners_group(owners, gid, owner, sizeof owner);
	else if (runtime_group_name(sb, gid, owner, sizeof owner) != 0)
		snprintf(owner, sizeof owner, "%u", (unsigned)gid);
	cJSON_AddStringToObject(entry, "group", owner);
	char when[64];
	fs_rfc3339(&st.st_mtim, when, sizeof when);
	cJSON_AddStringToObject(entry, "modifiedTime", when);
	if (is_link)
		cJSON_AddStringToObject(entry, "symlinkTarget", target);
	if (fd >= 0) {
		add_metadata(entry, fd);
		close(fd);
	}
	return entry;
}
