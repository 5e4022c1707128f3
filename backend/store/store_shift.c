/* Copying an overlay upper into a layer with canonical ids, and one layer
 * over a merge of the layers below it (store_shift.h). */
#define _GNU_SOURCE
#include "store/store_shift.h"

#include "lib/err.h"
#include "lib/tree_remove.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <search.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define OPAQUE_XATTR "trusted.overlay.opaque"
#define NOBODY 65534
#define CAPS_XATTR "security.capability"

/* A regular file with more than one link, copied once: later names link to it. */
struct link_seen {
	dev_t dev;
	ino_t ino;
	char *path; /* relative to the copy's root */
};

struct shift {
	uid_t base;
	unsigned long count;
	uint64_t bytes;
	int dst_root;
	int bottom;          /* merging (store_shift_merge): the bottom layer's root; else -1 */
	void *links;         /* tsearch tree of struct link_seen */
	char path[PATH_MAX]; /* the entry being copied, relative to the root */
	size_t len;
	struct err *err;
};

__attribute__((format(printf, 2, 3))) static int fail(struct shift *s, const char *fmt, ...)
{
	int e = errno;
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	err_set(s->err, e, "%s /%.*s: %s", what, (int)s->len, s->path, strerror(e));
	return -1;
}

static uid_t canonical(struct shift *s, uid_t id)
{
	if (id >= s->base && (unsigned long)(id - s->base) < s->count)
		return id - s->base;
	fprintf(stderr,
		"e2b-local-backend: sealing: /%.*s has id %u outside the sandbox's range; "
		"it becomes %d\n",
		(int)s->len, s->path, (unsigned)id, NOBODY);
	return NOBODY;
}

static int link_cmp(const void *a, const void *b)
{
	const struct link_seen *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino ? 1 : 0;
}

static void link_free(void *p)
{
	struct link_seen *l = p;
	free(l->path);
	free(l);
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* Merging: whether the bottom layer has the entry being copied (as a
 * directory, when dir), found without following a symbolic link of its: what
 * a whiteout or an opaque directory of the merged layer must go on hiding. */
static bool bottom_has(const struct shift *s, bool dir)
{
	char path[PATH_MAX];
	struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH};
	snprintf(path, sizeof path, "%.*s", (int)s->len, s->path);
	int fd = (int)syscall(SYS_openat2, s->bottom, path, &how, sizeof how);
	struct stat st;
	bool has = fd >= 0 && fstat(fd, &st) == 0 && !is_whiteout(&st) && (!dir || S_ISDIR(st.st_mode));
	if (fd >= 0)
		close(fd);
	return has;
}

static bool is_opaque(int fd)
{
	char v[2];
	return (fgetxattr(fd, OPAQUE_XATTR, v, sizeof v) == 1 && v[0] == 'y') ||
		(fgetxattr(fd, "user.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y');
}

/* A file capability's root id is a host id too (VFS_CAP_REVISION_3): it
 * becomes canonical, and a root id of 0 is the plain revision 2 form. */
static int set_capability(struct shift *s, int out, const char *value, ssize_t n)
{
	struct vfs_ns_cap_data cap;
	if (n != XATTR_CAPS_SZ_3) /* revision 2: no root id, copied as it is */
		return fsetxattr(out, CAPS_XATTR, value, (size_t)n, 0);
	memcpy(&cap, value, sizeof cap);
	uid_t root = canonical(s, le32toh(cap.rootid));
	if (root != 0) {
		cap.rootid = htole32(root);
		return fsetxattr(out, CAPS_XATTR, &cap, sizeof cap, 0);
	}
	cap.magic_etc = htole32(VFS_CAP_REVISION_2 | (le32toh(cap.magic_etc) & VFS_CAP_FLAGS_EFFECTIVE));
	return fsetxattr(out, CAPS_XATTR, &cap, XATTR_CAPS_SZ_2, 0);
}

static int copy_xattrs(struct shift *s, int in, int out)
{
	char names[8192], value[4096];
	ssize_t len = flistxattr(in, names, sizeof names);
	if (len < 0)
		return errno == ENOTSUP ? 0 : fail(s, "cannot list the xattrs of");
	for (const char *name = names; name < names + len; name += strlen(name) + 1) {
		bool opaque = strcmp(name, OPAQUE_XATTR) == 0 || strcmp(name, "user.overlay.opaque") == 0;
		bool user = strncmp(name, "user.", 5) == 0 && strncmp(name, "user.overlay.", 13) != 0;
		bool caps = strcmp(name, CAPS_XATTR) == 0;
		if ((!opaque && !user && !caps) || (opaque && s->bottom >= 0))
			continue; /* overlay's bookkeeping, ACLs, security labels; merging decides opacity */
		ssize_t n = fgetxattr(in, name, value, sizeof value);
		if (n < 0)
			return fail(s, "cannot read xattr %s of", name);
		int rc = opaque ? (n == 1 && value[0] == 'y' ? fsetxattr(out, OPAQUE_XATTR, "y", 1, 0) : 0)
			: caps  ? set_capability(s, out, value, n)
				: fsetxattr(out, name, value, (size_t)n, 0);
		if (rc != 0)
			return fail(s, "cannot set xattr %s on", name);
	}
	return 0;
}

/* Merging into a directory a layer below made: the xattrs it copies are the
 * upper one's, not added to the lower one's (its opacity stays). */
static int clear_xattrs(struct shift *s, int fd)
{
	char names[8192];
	ssize_t len = flistxattr(fd, names, sizeof names);
	if (len < 0)
		return errno == ENOTSUP ? 0 : fail(s, "cannot list the xattrs of");
	for (const char *name = names; name < names + len; name += strlen(name) + 1)
		if ((strncmp(name, "user.", 5) == 0 || strcmp(name, CAPS_XATTR) == 0) &&
			fremovexattr(fd, name) != 0)
			return fail(s, "cannot remove xattr %s of", name);
	return 0;
}

/* Owner, then mode (chown clears setuid), then times. */
static int finish_fd(struct shift *s, int fd, const struct stat *st)
{
	struct timespec times[2] = {st->st_atim, st->st_mtim};
	if (fchown(fd, canonical(s, st->st_uid), canonical(s, st->st_gid)) != 0 ||
		fchmod(fd, st->st_mode & 07777) != 0 || futimens(fd, times) != 0)
		return fail(s, "cannot set the owner, mode or times of");
	return 0;
}

static int finish_at(struct shift *s, int dfd, const char *name, const struct stat *st)
{
	struct timespec times[2] = {st->st_atim, st->st_mtim};
	if (fchownat(dfd, name, canonical(s, st->st_uid), canonical(s, st->st_gid), AT_SYMLINK_NOFOLLOW) !=
			0 ||
		(!S_ISLNK(st->st_mode) && fchmodat(dfd, name, st->st_mode & 07777, 0) != 0) ||
		utimensat(dfd, name, times, AT_SYMLINK_NOFOLLOW) != 0)
		return fail(s, "cannot set the owner, mode or times of");
	return 0;
}

static int copy_bytes(int in, int out, off_t size)
{
	off_t done = 0;
	while (done < size) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)(size - done), 0);
		if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
			n = sendfile(out, in, NULL, (size_t)(size - done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break; /* the file shrank meanwhile */
		done += n;
	}
	return 0;
}

/* A hard link to a file copied before, or 1 when this is its first name. */
static int link_again(struct shift *s, int dfd, const char *name, const struct stat *st)
{
	struct link_seen key = {.dev = st->st_dev, .ino = st->st_ino};
	struct link_seen **found = tfind(&key, &s->links, link_cmp);
	if (!found)
		return 1;
	return linkat(s->dst_root, (*found)->path, dfd, name, 0) == 0 ? 0 : fail(s, "cannot link");
}

static int remember_link(struct shift *s, const struct stat *st)
{
	struct link_seen *l = malloc(sizeof *l);
	char *path = strndup(s->path, s->len);
	if (!l || !path || !tsearch(l, &s->links, link_cmp)) {
		free(l);
		free(path);
		errno = ENOMEM;
		return fail(s, "cannot remember the links of");
	}
	*l = (struct link_seen){.dev = st->st_dev, .ino = st->st_ino, .path = path};
	return 0;
}

static int copy_file(struct shift *s, int sfd, int dfd, const char *name, const struct stat *st)
{
	if (st->st_nlink > 1) {
		int rc = link_again(s, dfd, name, st);
		if (rc <= 0)
			return rc;
	}
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out =
		in >= 0 ? openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	int rc = out < 0                                ? fail(s, "cannot open")
		: copy_bytes(in, out, st->st_size) != 0 ? fail(s, "cannot copy")
		: copy_xattrs(s, in, out) != 0          ? -1
							: finish_fd(s, out, st);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	s->bytes += (uint64_t)st->st_size;
	return rc != 0 ? rc : st->st_nlink > 1 ? remember_link(s, st) : 0;
}

static int copy_symlink(struct shift *s, int sfd, int dfd, const char *name, const struct stat *st)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(sfd, name, target, sizeof target - 1);
	if (n < 0)
		return fail(s, "cannot read the link");
	target[n] = '\0';
	if (symlinkat(target, dfd, name) != 0)
		return fail(s, "cannot make the link");
	s->bytes += (uint64_t)n;
	return finish_at(s, dfd, name, st);
}

static int copy_dir(struct shift *s, int sfd, int dfd, int depth);

/* Merging a directory over what the layers below left at its name: their
 * directory stays, its entries merged, unless this one is opaque; anything
 * else goes. The result is opaque when it hides a directory the bottom layer
 * has: this one is opaque, or what it replaces hid the bottom's. */
static int merge_dir(struct shift *s, int in, int dfd, const char *name, bool *keep, bool *opaque)
{
	struct stat had;
	bool own = is_opaque(in);
	bool exists = fstatat(dfd, name, &had, AT_SYMLINK_NOFOLLOW) == 0;
	*keep = exists && S_ISDIR(had.st_mode) && !own;
	*opaque = !*keep && (exists || own) && bottom_has(s, true);
	return exists && !*keep && tree_remove_at(dfd, name) != 0 ? fail(s, "cannot replace") : 0;
}

static int copy_subdir(struct shift *s, int sfd, int dfd, const char *name, const struct stat *st, int depth)
{
	bool keep = false, opaque = false;
	int in = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = in < 0          ? fail(s, "cannot open the directory")
		: s->bottom >= 0 ? merge_dir(s, in, dfd, name, &keep, &opaque)
				 : 0;
	if (rc == 0 && !keep && mkdirat(dfd, name, 0700) != 0)
		rc = fail(s, "cannot make the directory");
	int out = rc == 0 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (rc == 0 && out < 0)
		rc = fail(s, "cannot open the directory");
	if (rc == 0 && ((keep && clear_xattrs(s, out) != 0) || copy_xattrs(s, in, out) != 0))
		rc = -1;
	if (rc == 0 && opaque && fsetxattr(out, OPAQUE_XATTR, "y", 1, 0) != 0)
		rc = fail(s, "cannot set xattr " OPAQUE_XATTR " on");
	if (rc == 0) {
		rc = copy_dir(s, in, out, depth + 1);
		in = -1; /* copy_dir closed it */
	}
	if (rc == 0)
		rc = finish_fd(s, out, st);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

static int copy_entry(struct shift *s, int sfd, int dfd, const char *name, int depth)
{
	struct stat st;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return fail(s, "cannot stat");
	if (S_ISDIR(st.st_mode))
		return copy_subdir(s, sfd, dfd, name, &st, depth);
	if (s->bottom >= 0) {
		/* Merging: it replaces what the layers below had there; a whiteout
		 * stays only while the bottom layer has something to hide. */
		if (tree_remove_at(dfd, name) != 0)
			return fail(s, "cannot replace");
		if (is_whiteout(&st) && !bottom_has(s, false))
			return 0;
	}
	if (S_ISREG(st.st_mode))
		return copy_file(s, sfd, dfd, name, &st);
	if (S_ISLNK(st.st_mode))
		return copy_symlink(s, sfd, dfd, name, &st);
	if (is_whiteout(&st) || S_ISFIFO(st.st_mode)) {
		/* A whiteout (a name deleted from the layers below; overlay makes
		 * it as the host's root, and its owner means nothing), or a FIFO. */
		if (S_ISCHR(st.st_mode))
			st.st_uid = st.st_gid = s->base;
		if (mknodat(dfd, name, (st.st_mode & S_IFMT) | 0600, st.st_rdev) != 0)
			return fail(s, "cannot make");
		return finish_at(s, dfd, name, &st);
	}
	fprintf(stderr, "e2b-local-backend: sealing: /%.*s is a device or socket; left out\n", (int)s->len,
		s->path);
	return 0;
}

/* Copies the entries of the directory sfd (taken: closed here) into dfd. */
static int copy_dir(struct shift *s, int sfd, int dfd, int depth)
{
	if (depth > STORE_SHIFT_MAX_DEPTH) {
		close(sfd);
		errno = ELOOP;
		return fail(s, "more than %d levels of directories at", STORE_SHIFT_MAX_DEPTH);
	}
	DIR *d = fdopendir(sfd);
	if (!d) {
		close(sfd);
		return fail(s, "cannot read the directory");
	}
	size_t len = s->len;
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		int n = snprintf(s->path + len, sizeof s->path - len, "%s%s", len ? "/" : "", e->d_name);
		if (n < 0 || (size_t)n >= sizeof s->path - len) {
			errno = ENAMETOOLONG;
			rc = fail(s, "a name too long below");
			break;
		}
		s->len = len + (size_t)n;
		rc = copy_entry(s, dirfd(d), dfd, e->d_name, depth);
		s->len = len;
	}
	if (rc == 0 && errno != 0)
		rc = fail(s, "cannot read the directory");
	closedir(d);
	return rc;
}

/* src's tree into dst (made first unless merging, where it may be there from
 * the layers below). */
static int shift_tree(struct shift *s, const char *src, const char *dst)
{
	struct stat st;
	bool merge = s->bottom >= 0;
	int in = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (merge ? 0 : O_NOFOLLOW));
	int rc = in < 0 || fstat(in, &st) != 0 ? fail(s, "cannot open the layer to copy")
		: mkdir(dst, 0700) != 0 && (!merge || errno != EEXIST)
		? fail(s, "cannot make the layer's root")
		: 0;
	if (rc == 0 && (s->dst_root = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = fail(s, "cannot open the layer's root");
	if (rc == 0 && ((merge && clear_xattrs(s, s->dst_root) != 0) || copy_xattrs(s, in, s->dst_root) != 0))
		rc = -1;
	if (rc == 0) {
		rc = copy_dir(s, in, s->dst_root, 1);
		in = -1;
	}
	if (rc == 0)
		rc = finish_fd(s, s->dst_root, &st);
	if (in >= 0)
		close(in);
	if (s->dst_root >= 0)
		close(s->dst_root);
	tdestroy(s->links, link_free);
	return rc;
}

int store_shift_copy(const char *src, const char *dst, uid_t base, unsigned long count, uint64_t *bytes,
	struct err *err)
{
	struct shift s = {.base = base, .count = count, .dst_root = -1, .bottom = -1, .err = err};
	int rc = shift_tree(&s, src, dst);
	*bytes = s.bytes;
	return rc;
}

int store_shift_merge(const char *src, const char *dst, const char *bottom, struct err *err)
{
	/* Layers have canonical ids already: every id maps to itself. */
	struct shift s = {.base = 0, .count = ULONG_MAX, .dst_root = -1, .err = err};
	s.bottom = open(bottom, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s.bottom < 0)
		return fail(&s, "cannot open the bottom layer");
	int rc = shift_tree(&s, src, dst);
	close(s.bottom);
	return rc;
}
