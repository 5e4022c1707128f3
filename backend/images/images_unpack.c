/* One image layer into a layer directory (images_unpack.h). Two libarchive
 * readers in a row: the outer one only decompresses (raw format, gzip or
 * zstd filter, or none) and its blocks are hashed on their way to the inner
 * one, which reads the tar. */
#define _GNU_SOURCE
#include "images/images_unpack.h"

#include "lib/err.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define WHITEOUT ".wh."
#define OPAQUE ".wh..wh..opq"
#define MAX_ID 65535
#define NOBODY 65534

struct feed {
	struct archive *outer;
	EVP_MD_CTX *sha; /* OpenSSL's: SHA-NI or AVX2 where the CPU has them */
	uint64_t total, max;
	uint64_t *shared; /* images_unpack_source.shared_total */
};

/* What the image's unpacks together have unpacked, with size added: a
 * counter in shared memory when several run at once, else this one's. */
static uint64_t counted(struct feed *f, size_t size)
{
	f->total += size;
	return f->shared ? __atomic_add_fetch(f->shared, size, __ATOMIC_RELAXED) : f->total;
}

static la_ssize_t feed_read(struct archive *inner, void *ctx, const void **buf)
{
	struct feed *f = ctx;
	size_t size;
	la_int64_t offset;
	int r = archive_read_data_block(f->outer, buf, &size, &offset);
	if (r == ARCHIVE_EOF)
		return 0;
	if (r < ARCHIVE_WARN) {
		archive_set_error(inner, EIO, "cannot decompress the layer: %s",
			archive_error_string(f->outer));
		return -1;
	}
	if (counted(f, size) > f->max) {
		archive_set_error(inner, EFBIG, "the image is larger than the limit (%llu MiB unpacked)",
			(unsigned long long)(f->max >> 20));
		return -1;
	}
	EVP_DigestUpdate(f->sha, *buf, size);
	return (la_ssize_t)size;
}

/* name without "./" or "/" in front; NULL when it has a ".." part. */
static const char *clean(const char *name)
{
	while (name[0] == '/' || (name[0] == '.' && name[1] == '/'))
		name += name[0] == '/' ? 1 : 2;
	for (const char *p = name; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return NULL;
		p += n + (p[n] == '/');
	}
	return name;
}

/* The directory dir (relative to root) opened, made when missing, every
 * part a real directory (never through a symbolic link). -1 with errno. */
static int open_dir(int root, const char *dir)
{
	int fd = dup(root);
	char part[256];
	while (fd >= 0 && *dir) {
		size_t n = strcspn(dir, "/");
		if (n >= sizeof part) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(part, dir, n);
		part[n] = '\0';
		dir += n + (dir[n] == '/');
		if (n == 0 || strcmp(part, ".") == 0)
			continue;
		if (mkdirat(fd, part, 0755) != 0 && errno != EEXIST) {
			close(fd);
			return -1;
		}
		int next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd;
}

/* Whether path (relative to root) is an existing file reached without a
 * symbolic link: a hard link's target must be one of the layer's own files. */
static bool inside(int root, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 0, path);
	int fd = dup(root);
	for (char *p = dir, *next; fd >= 0 && *p; p = next) {
		next = p + strcspn(p, "/");
		if (*next)
			*next++ = '\0';
		int sub = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = sub;
	}
	struct stat st;
	bool ok = fd >= 0 && fstatat(fd, slash ? slash + 1 : path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode);
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A ".wh." entry at path: a whiteout, or its directory made opaque. */
static int whiteout(int root, const char *path, struct images_unpack_stats *st, struct err *err)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	char dir[4096];
	snprintf(dir, sizeof dir, "%.*s", (int)(base - path), path);
	bool opaque = strcmp(base, OPAQUE) == 0;
	if (!opaque && strncmp(base, WHITEOUT WHITEOUT, 8) == 0)
		return 0; /* aufs' own bookkeeping (.wh..wh.plnk, ...) */
	int fd = open_dir(root, dir);
	int rc = fd < 0  ? -1
		: opaque ? fsetxattr(fd, "trusted.overlay.opaque", "y", 1, 0)
			 : mknodat(fd, base + 4, S_IFCHR | 0600, makedev(0, 0));
	if (rc != 0 && !opaque && errno == EEXIST)
		rc = 0; /* the same name twice */
	if (rc != 0)
		err_set(err, errno, "cannot apply %s in the layer: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc == 0 && opaque)
		st->opaque++;
	else if (rc == 0)
		st->whiteouts++;
	return rc;
}

/* Keeps user.* and security.capability; the rest (trusted.overlay.* among
 * them) must not steer the overlay. */
static void filter_xattrs(struct archive_entry *e)
{
	struct kept {
		char *name;
		void *value;
		size_t size;
	} kept[64];
	size_t n = 0;
	const char *name;
	const void *value;
	size_t size;
	archive_entry_xattr_reset(e);
	while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK && n < 64) {
		if (strncmp(name, "user.", 5) != 0 && strcmp(name, "security.capability") != 0)
			continue;
		kept[n].name = strdup(name);
		kept[n].value = malloc(size ? size : 1);
		if (kept[n].name && kept[n].value) {
			memcpy(kept[n].value, value, size);
			kept[n++].size = size;
		} else {
			free(kept[n].name);
			free(kept[n].value);
		}
	}
	archive_entry_xattr_clear(e);
	for (size_t i = 0; i < n; i++) {
		archive_entry_xattr_add_entry(e, kept[i].name, kept[i].value, kept[i].size);
		free(kept[i].name);
		free(kept[i].value);
	}
}

static int copy_data(struct archive *in, struct archive *out)
{
	const void *buf;
	size_t size;
	la_int64_t offset;
	for (;;) {
		int r = archive_read_data_block(in, &buf, &size, &offset);
		if (r == ARCHIVE_EOF)
			return ARCHIVE_OK;
		if (r < ARCHIVE_WARN)
			return r;
		if (archive_write_data_block(out, buf, size, offset) < ARCHIVE_WARN)
			return ARCHIVE_FATAL;
	}
}

/* One entry of the tar. */
static int entry(struct archive *in, struct archive *disk, int root, struct archive_entry *e,
	uint64_t max_tar_bytes, struct images_unpack_stats *st, struct err *err)
{
	const char *path = clean(archive_entry_pathname(e));
	const char *link = archive_entry_hardlink(e) ? clean(archive_entry_hardlink(e)) : "";
	if (!path || !link) {
		err_set(err, 0, "the layer has a path that leaves its root: %.300s",
			archive_entry_pathname(e));
		return -1;
	}
	const char *base = strrchr(path, '/');
	if (strncmp(base ? base + 1 : path, WHITEOUT, 4) == 0)
		return whiteout(root, path, st, err);
	mode_t type = archive_entry_filetype(e);
	if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFSOCK) {
		st->dropped++;
		return 0;
	}
	/* No file can be larger than the tar that holds it. A size libarchive
	 * could not read comes back as INT64_MAX, and its disk writer, failing
	 * to extend a file that far, keeps the file's descriptor open. */
	if (type == AE_IFREG &&
		(archive_entry_size(e) < 0 || (uint64_t)archive_entry_size(e) > max_tar_bytes)) {
		err_set(err, 0, "the layer has a file larger than the limit (%llu MiB unpacked): %.300s",
			(unsigned long long)(max_tar_bytes >> 20), path);
		return -1;
	}
	if (*link && !inside(root, link)) {
		err_set(err, 0, "the layer has a hard link to what is not one of its files: %.300s -> %.300s",
			path, link);
		return -1;
	}
	if (!*path)
		path = ".";
	char *p = strdup(path), *l = *link ? strdup(link) : NULL;
	if (!p || (*link && !l)) {
		free(p);
		err_set(err, 0, "out of memory");
		return -1;
	}
	archive_entry_set_pathname(e, p);
	if (l)
		archive_entry_set_hardlink(e, l);
	free(p);
	free(l);
	if (archive_entry_uid(e) > MAX_ID)
		archive_entry_set_uid(e, NOBODY);
	if (archive_entry_gid(e) > MAX_ID)
		archive_entry_set_gid(e, NOBODY);
	filter_xattrs(e);
	if (type == AE_IFREG || type == AE_IFLNK)
		st->file_bytes += type == AE_IFREG
			? (uint64_t)archive_entry_size(e)
			: strlen(archive_entry_symlink(e) ? archive_entry_symlink(e) : "");
	int r = archive_write_header(disk, e);
	if (r >= ARCHIVE_WARN && type == AE_IFREG && archive_entry_size(e) > 0)
		r = copy_data(in, disk);
	if (r >= ARCHIVE_WARN)
		r = archive_write_finish_entry(disk);
	if (r < ARCHIVE_WARN) {
		const char *msg =
			archive_error_string(disk) ? archive_error_string(disk) : archive_error_string(in);
		err_set(err, 0, "cannot unpack %.300s: %.300s", path, msg ? msg : "error");
		return -1;
	}
	st->entries++;
	return 0;
}

static void hex(const uint8_t *d, char out[65])
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static la_ssize_t source_read(struct archive *outer, void *ctx, const void **buf)
{
	const struct images_unpack_source *src = ctx;
	ssize_t n = src->read(src->ctx, buf);
	if (n < 0)
		archive_set_error(outer, errno ? errno : EIO, "cannot read the layer: %s",
			strerror(errno ? errno : EIO));
	return n;
}

int images_unpack_stream(const struct images_unpack_source *src, const char *root, const char *diff_id,
	uint64_t max_tar_bytes, struct images_unpack_stats *st, struct err *err)
{
	struct images_unpack_source source = *src; /* libarchive's callback data is not const */
	struct feed f = {.outer = archive_read_new(), .max = max_tar_bytes, .shared = src->shared_total};
	struct archive *in = archive_read_new(), *disk = archive_write_disk_new();
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc = -1;
	memset(st, 0, sizeof *st);
	f.sha = EVP_MD_CTX_new();
	if (!f.sha || EVP_DigestInit_ex(f.sha, EVP_sha256(), NULL) != 1 || !f.outer || !in || !disk ||
		cwd < 0 || rootfd < 0 || fchdir(rootfd) != 0) {
		err_set(err, errno, "cannot start unpacking into %s: %s", root, strerror(errno));
		goto out;
	}
	archive_read_support_filter_gzip(f.outer);
	archive_read_support_filter_zstd(f.outer);
	archive_read_support_format_raw(f.outer);
	archive_read_support_format_tar(in);
	/* Names relative to root (the cwd), no way out of it. No user lookup:
	 * the tar's numeric ids are the canonical ids. */
	archive_write_disk_set_options(disk,
		ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_XATTR |
			ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
			ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	struct archive_entry *raw;
	if (archive_read_open(f.outer, &source, NULL, source_read, NULL) != ARCHIVE_OK ||
		archive_read_next_header(f.outer, &raw) != ARCHIVE_OK) {
		err_set(err, 0, "cannot read the layer: %s", archive_error_string(f.outer));
		goto out;
	}
	if (archive_read_open(in, &f, NULL, feed_read, NULL) != ARCHIVE_OK) {
		err_set(err, 0, "the layer is not a tar: %s", archive_error_string(in));
		goto out;
	}
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)
		if (entry(in, disk, rootfd, e, max_tar_bytes, st, err) != 0)
			goto out;
	if (r != ARCHIVE_EOF) {
		err_set(err, 0, "the layer is not a valid tar: %s", archive_error_string(in));
		goto out;
	}
	if (archive_write_close(disk) != ARCHIVE_OK) {
		err_set(err, 0, "cannot finish the layer: %s", archive_error_string(disk));
		goto out;
	}
	/* The tar's end may leave padding unread: it counts in the diff id. */
	const void *buf;
	la_ssize_t n;
	while ((n = feed_read(in, &f, &buf)) > 0)
		;
	if (n < 0) {
		err_set(err, 0, "%s", archive_error_string(in));
		goto out;
	}
	uint8_t d[EVP_MAX_MD_SIZE];
	char got[65];
	EVP_DigestFinal_ex(f.sha, d, NULL);
	hex(d, got);
	st->tar_bytes = f.total;
	snprintf(st->diff_id, sizeof st->diff_id, "sha256:%s", got);
	if (diff_id && strcmp(diff_id, st->diff_id) != 0) {
		err_set(err, 0, "layer %.80s does not match its digest: its content is sha256:%s", diff_id,
			got);
		goto out;
	}
	rc = 0;
out:
	/* Freed while root is still the working directory: after a failure the
	 * writer's close is what sets the directories' modes and times, by the
	 * names it wrote, relative to the working directory. */
	archive_write_free(disk);
	if (cwd >= 0 && fchdir(cwd) != 0)
		rc = -1;
	if (cwd >= 0)
		close(cwd);
	if (rootfd >= 0)
		close(rootfd);
	archive_read_free(in);
	archive_read_free(f.outer);
	EVP_MD_CTX_free(f.sha);
	return rc;
}

struct file_source {
	int fd;
	char buf[1 << 20];
};

static ssize_t file_read(void *ctx, const void **buf)
{
	struct file_source *f = ctx;
	ssize_t n;
	while ((n = read(f->fd, f->buf, sizeof f->buf)) < 0 && errno == EINTR)
		;
	*buf = f->buf;
	return n;
}

int images_unpack_layer(const char *blob, const char *root, const char *diff_id, uint64_t max_tar_bytes,
	struct images_unpack_stats *st, struct err *err)
{
	struct file_source *f = malloc(sizeof *f);
	if (f)
		f->fd = open(blob, O_RDONLY | O_CLOEXEC);
	if (!f || f->fd < 0) {
		memset(st, 0, sizeof *st);
		err_set(err, errno, "cannot read the layer: %s", strerror(errno));
		free(f);
		return -1;
	}
	const struct images_unpack_source src = {.read = file_read, .ctx = f};
	int rc = images_unpack_stream(&src, root, diff_id, max_tar_bytes, st, err);
	close(f->fd);
	free(f);
	return rc;
}
