/* One disk image (runtime_disk_image.h): made by copying a formatted master
 * image of its size (made once with mke2fs: copying its few hundred KiB of
 * metadata is far quicker than running mke2fs, which also fsyncs), attached
 * to a free loop device and mounted; and finding the loop devices that hold
 * images. */
#define _GNU_SOURCE
#include "runtime/runtime_disk_image.h"

/* Paths here are built into fixed buffers (PATH_MAX-sized); one that would
 * not fit is cut and then simply not found. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/err.h"
#include "runtime/runtime_control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MASTERS_MAX 8       /* other sizes whose master image is kept; beyond, mke2fs each time */
#define DETACH_WAIT_MS 2000 /* how long to wait for a loop device to let go */
/* noinit_itable: the image is sparse, so its inode tables already read as
 * zeros; ext4 must not write 16 MiB of zeros per GiB in the background.
 * discard: space freed in the sandbox is punched out of the sparse image. */
#define MOUNT_OPTIONS "noinit_itable,discard"
/* ext4's (and XFS's) "going down" ioctl; not in Debian 12's kernel headers. */
#define EXT4_IOC_SHUTDOWN _IOR('X', 125, uint32_t)
#define EXT4_GOING_FLAGS_NOLOGFLUSH 0x2 /* drop what is not written yet */

static const char *mke2fs_path;
static int masters; /* sizes other than the default with a master image */

int runtime_disk_image_check(struct err *err)
{
	static const char *const mke2fs[] = {"/usr/sbin/mke2fs", "/sbin/mke2fs"};
	if (access("/dev/loop-control", R_OK | W_OK) != 0)
		return err_set(err, errno, "no loop devices (/dev/loop-control), needed for the disk limit");
	for (size_t i = 0; i < sizeof mke2fs / sizeof mke2fs[0]; i++) {
		if (access(mke2fs[i], X_OK) == 0) {
			mke2fs_path = mke2fs[i];
			return 0;
		}
	}
	return err_set(err, ENOENT, "no mke2fs (e2fsprogs) in /usr/sbin or /sbin, needed for the disk limit");
}

static int run_mke2fs(const char *img)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s", img);
	/* Explicit sizes, so every image is alike whatever mke2fs.conf says about
	 * small filesystems. One inode per 4 KiB block: a sandbox runs out of
	 * space before it runs out of inodes (unless its files are empty), at the
	 * price of about 6% of the size for inode tables (sparse: they cost the
	 * host nothing). No journal (the image dies with its sandbox), no
	 * reserved blocks (the sandbox gets all of it). */
	char *argv[] = {"mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-i", "4096", "-I", "256", "-m",
		"0", "-O", "^has_journal,^resize_inode", "-E", "lazy_itable_init=1,nodiscard", path, NULL};
	char *envp[] = {NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pid_t pid;
	int rc = posix_spawn(&pid, mke2fs_path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* A new sparse file of size_mb formatted as ext4. */
static int format(const char *img, int size_mb)
{
	int fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int rc = ftruncate(fd, (off_t)size_mb << 20);
	close(fd);
	return rc == 0 ? run_mke2fs(img) : -1;
}

/* Copies from to a new file to, holes and all (only the data is copied). */
static int copy_sparse(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	struct stat st;
	int rc = -1;
	if (out >= 0 && fstat(in, &st) == 0 && ftruncate(out, st.st_size) == 0) {
		rc = 0;
		for (off_t pos = 0; rc == 0 && pos < st.st_size;) {
			off_t data = lseek(in, pos, SEEK_DATA);
			if (data < 0) {
				rc = errno == ENXIO ? 0 : -1; /* ENXIO: only a hole is left */
				break;
			}
			off_t hole = lseek(in, data, SEEK_HOLE);
			if (hole < 0) {
				rc = -1;
				break;
			}
			loff_t a = data, b = data;
			while (rc == 0 && a < hole) {
				ssize_t n = copy_file_range(in, &a, out, &b, (size_t)(hole - a), 0);
				if (n <= 0)
					rc = -1;
			}
			pos = hole;
		}
	}
	int err = errno;
	close(in);
	if (out >= 0)
		close(out);
	errno = err;
	return rc;
}

/* Makes img: a copy of its size's master in masters_dir (made first if need
 * be), or, when too many sizes have a master already, a formatted file. */
static int make_image(const char *masters_dir, const char *img, int size_mb)
{
	char master[PATH_MAX], tmp[PATH_MAX + 16];
	snprintf(master, sizeof master, "%s/ext4-%d.img", masters_dir, size_mb);
	if (access(master, F_OK) == 0)
		return copy_sparse(master, img);
	if (size_mb != SANDBOX_DEFAULT_DISK_SIZE_MB && masters >= MASTERS_MAX)
		return format(img, size_mb);
	/* Made under a name of its own and renamed: the helper and the event
	 * loop may make the same master at the same time. */
	snprintf(tmp, sizeof tmp, "%s.%d", master, (int)getpid());
	if (format(tmp, size_mb) != 0 || rename(tmp, master) != 0) {
		int err = errno;
		unlink(tmp);
		errno = err;
		return -1;
	}
	if (size_mb != SANDBOX_DEFAULT_DISK_SIZE_MB)
		masters++;
	return copy_sparse(master, img);
}

/* Attaches img to a free loop device, with autoclear (the kernel detaches
 * it when its last user lets go: after the unmount, or when the backend's
 * mount namespace dies with it) and direct I/O (no second copy of the
 * sandbox's data in the page cache). Returns the device's descriptor, to be
 * closed once the filesystem is mounted; -1 with errno. */
static int loop_attach(const char *img, int *index)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	int file = ctl >= 0 ? open(img, O_RDWR | O_CLOEXEC) : -1;
	int dev_fd = -1, err = errno;
	/* Another process may configure the free device first: take the next. */
	for (int tries = 0; file >= 0 && dev_fd < 0 && tries < 32; tries++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		char dev[32];
		snprintf(dev, sizeof dev, "/dev/loop%d", n);
		int fd = n >= 0 ? open(dev, O_RDWR | O_CLOEXEC) : -1;
		if (fd < 0) {
			err = errno;
			break;
		}
		struct loop_config cfg;
		memset(&cfg, 0, sizeof cfg);
		cfg.fd = (unsigned)file;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO;
		int rc = ioctl(fd, LOOP_CONFIGURE, &cfg);
		if (rc != 0 && errno == EINVAL) {
			cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR; /* no direct I/O on this filesystem */
			rc = ioctl(fd, LOOP_CONFIGURE, &cfg);
		}
		err = errno;
		if (rc == 0) {
			dev_fd = fd;
			*index = n;
		} else {
			close(fd);
			if (err != EBUSY)
				break;
		}
	}
	if (file >= 0)
		close(file);
	if (ctl >= 0)
		close(ctl);
	errno = err;
	return dev_fd;
}

/* Reads the image's metadata (its only data: the rest is holes) through the
 * device into the page cache ext4 reads it from. Otherwise the sandbox's
 * first mkdir waits for those reads (direct I/O, after the copy's dirty
 * pages are written out), on the event loop. */
static void warm_up(int dev_fd, const char *img)
{
	int fd = open(img, O_RDONLY | O_CLOEXEC);
	static char buf[65536];
	for (off_t pos = 0; fd >= 0;) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		off_t hole = data < 0 ? -1 : lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			break;
		for (off_t at = data; at < hole; at += (off_t)sizeof buf)
			if (pread(dev_fd, buf,
				    (size_t)(hole - at < (off_t)sizeof buf ? hole - at : (off_t)sizeof buf),
				    at) <= 0)
				break;
		pos = hole;
	}
	if (fd >= 0)
		close(fd);
}

/* Attaches img and mounts its filesystem at mnt (made if missing); disk
 * says what to release. 0, or -1 with errno. */
static int attach_and_mount(const char *img, const char *mnt, struct runtime_disk *disk, bool warm)
{
	int dev_fd = loop_attach(img, &disk->loop);
	int rc = -1;
	if (dev_fd >= 0 && (mkdir(mnt, 0755) == 0 || errno == EEXIST)) {
		char dev[32];
		snprintf(dev, sizeof dev, "/dev/loop%d", disk->loop);
		rc = mount(dev, mnt, "ext4", 0, MOUNT_OPTIONS);
	}
	int err = errno;
	if (rc == 0 && warm)
		warm_up(dev_fd, img);
	if (dev_fd >= 0)
		close(dev_fd); /* the mount holds the device now; without it, autoclear detaches it */
	disk->mounted = rc == 0;
	errno = err;
	return rc;
}

int runtime_disk_image_prepare(const char *masters_dir, int size_mb, const char *img, const char *mnt,
	struct runtime_disk *disk, bool warm)
{
	if (make_image(masters_dir, img, size_mb) != 0) {
		int err = errno;
		unlink(img);
		errno = err;
		return -1;
	}
	int rc = attach_and_mount(img, mnt, disk, warm);
	if (rc != 0) {
		int err = errno;
		unlink(img);
		errno = err;
	}
	return rc;
}

static bool loop_holds(int n, const char *prefix);

/* Whether a loop device still holds img (its filesystem mounted somewhere). */
static bool image_held(const char *img)
{
	char real[PATH_MAX];
	if (!realpath(img, real))
		return false;
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	bool held = false;
	while (d && !held && (e = readdir(d)) != NULL) {
		int n, end = 0;
		if (sscanf(e->d_name, "loop%d%n", &n, &end) == 1 && e->d_name[end] == '\0')
			held = loop_holds(n, real);
	}
	if (d)
		closedir(d);
	return held;
}

int runtime_disk_image_mount_existing(const char *img, const char *mnt, struct runtime_disk *disk)
{
	disk->loop = -1;
	disk->mounted = false;
	/* Never two filesystems on one image: one still mounted elsewhere (a
	 * dead backend's, going) writes out what it holds first. */
	for (int ms = 0; image_held(img); ms += 5) {
		if (ms >= DETACH_WAIT_MS) {
			errno = EBUSY;
			return -1;
		}
		runtime_sleep_ms(5);
	}
	return attach_and_mount(img, mnt, disk, false);
}

void runtime_disk_image_unmount(const char *mnt)
{
	/* Its image is deleted next: what the sandbox wrote is dropped rather
	 * than written to the host's disk first. */
	int fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		uint32_t how = EXT4_GOING_FLAGS_NOLOGFLUSH;
		ioctl(fd, EXT4_IOC_SHUTDOWN, &how);
		close(fd);
	}
	if (umount2(mnt, 0) != 0)
		umount2(mnt, MNT_DETACH);
}

/* --- loop devices ----------------------------------------------------------------- */

/* Whether /dev/loop<n> holds a file whose path starts with prefix. */
static bool loop_holds(int n, const char *prefix)
{
	char path[64], file[PATH_MAX] = "";
	snprintf(path, sizeof path, "/sys/block/loop%d/loop/backing_file", n);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false; /* not attached */
	ssize_t len = read(fd, file, sizeof file - 1);
	close(fd);
	return len > 0 && strncmp(file, prefix, strlen(prefix)) == 0;
}

void runtime_disk_image_wait_detached(int n, const char *prefix)
{
	for (int ms = 0; ms < DETACH_WAIT_MS && loop_holds(n, prefix); ms += 5)
		runtime_sleep_ms(5);
}

int runtime_disk_image_loops_under(const char *root, bool detach)
{
	char real[PATH_MAX], prefix[PATH_MAX + 1];
	snprintf(prefix, sizeof prefix, "%s/", realpath(root, real) ? real : root);
	DIR *d = opendir("/sys/block");
	struct dirent *e;
	int count = 0;
	while (d && (e = readdir(d)) != NULL) {
		int n, end = 0;
		if (sscanf(e->d_name, "loop%d%n", &n, &end) != 1 || e->d_name[end] != '\0' ||
			!loop_holds(n, prefix))
			continue;
		count++;
		if (!detach)
			continue;
		char dev[32];
		snprintf(dev, sizeof dev, "/dev/loop%d", n);
		int fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			ioctl(fd, LOOP_CLR_FD, 0);
			close(fd);
		}
	}
	if (d)
		closedir(d);
	return count;
}

void runtime_disk_image_unmount_below(const char *dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mp[2048];
	size_t len = strlen(dir);
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "%*s %*s %*s %*s %2047s", mp) == 1 && strncmp(mp, dir, len) == 0 &&
			mp[len] == '/')
			umount2(mp, MNT_DETACH);
	if (f)
		fclose(f);
}
