/* A sandbox's disk limit (runtime_disk.h): the pool of ready images of the
 * default size, the helper process that prepares them, and giving a sandbox
 * its disk and taking it back. One image: runtime_disk_image.c.
 *
 * <state_root>/disks holds the master images (ext4-<MiB>.img) and the
 * pool's images, pool-<slot>.img mounted at pool-<slot>/. A create renames
 * the image into the sandbox's directory and moves the mount there
 * (MS_MOVE), which costs a few syscalls. The slot's empty directory is
 * reused for its next image (removing a directory that was a mount point
 * costs more than all the rest). */
#define _GNU_SOURCE
#include "runtime/runtime_disk.h"

/* Paths here are built into fixed buffers (PATH_MAX-sized); one that would
 * not fit is cut and then simply not found. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include "lib/child_fds.h"
#include "lib/err.h"
#include "lib/tree_remove.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_disk_image.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELPER_WAIT_MS 10000 /* how long a create or the shutdown waits for the helper */

struct pool_image {
	int slot; /* 0..RUNTIME_DISK_POOL-1: pool-<slot>.img, mounted at pool-<slot>/ */
	int loop;
};

static struct {
	char *dir;    /* <state_root>/disks, NULL until runtime_disk_init */
	pid_t helper; /* -1: none (the pool stays empty, images are made on demand) */
	int sock;     /* to the helper "<slot> <MiB>\n", back "<slot> <loop or -1>\n" */
	struct event *ev;
	struct event *refill_ev; /* a zero timer: the next loop turn asks for a new image */
	struct pool_image ready[RUNTIME_DISK_POOL];
	int nready, pending;
	unsigned busy; /* slots ready or asked for, one bit each */
	char in[256];  /* the helper's answers not yet complete */
	size_t in_len;
} dk = {.helper = -1, .sock = -1};

static void pool_paths(int slot, char img[PATH_MAX], char mnt[PATH_MAX])
{
	snprintf(img, PATH_MAX, "%s/pool-%d.img", dk.dir, slot);
	snprintf(mnt, PATH_MAX, "%s/pool-%d", dk.dir, slot);
}

/* --- removal ------------------------------------------------------------------------ */

void runtime_disk_release(const char *dir, const struct runtime_disk *disk)
{
	char mnt[PATH_MAX], img[PATH_MAX];
	snprintf(mnt, sizeof mnt, "%s/" RUNTIME_DISK_MOUNT, dir);
	snprintf(img, sizeof img, "%s/disk.img", dir);
	if (disk->mounted)
		runtime_disk_image_unmount(mnt);
	/* The overlay's own reference goes when its last user does; then the
	 * filesystem closes the device and autoclear detaches it. */
	if (disk->loop >= 0)
		runtime_disk_image_wait_detached(disk->loop, img);
}

/* --- the pool and its helper -------------------------------------------------------- */

/* Cuts the first line out of buf (len bytes of cap) into line; false
 * while there is none. */
static bool take_line(char *buf, size_t *len, size_t cap, char *line, size_t size)
{
	char *nl = memchr(buf, '\n', *len);
	if (!nl) {
		if (*len == cap)
			*len = 0; /* no line is that long: drop the garbage */
		return false;
	}
	size_t n = (size_t)(nl - buf);
	snprintf(line, size, "%.*s", (int)n, buf);
	memmove(buf, nl + 1, *len - n - 1);
	*len -= n + 1;
	return true;
}

/* The helper: prepares each image it is asked for, answers, and exits when
 * the backend closes its end. Never returns. */
__attribute__((noreturn)) static void helper_main(int sock)
{
	char buf[256], line[64];
	size_t len = 0;
	for (;;) {
		while (!take_line(buf, &len, sizeof buf, line, sizeof line)) {
			ssize_t n = read(sock, buf + len, sizeof buf - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				_exit(0);
			len += (size_t)n;
		}
		int slot, size_mb;
		if (sscanf(line, "%d %d", &slot, &size_mb) != 2)
			continue;
		char img[PATH_MAX], mnt[PATH_MAX], answer[64];
		pool_paths(slot, img, mnt);
		struct runtime_disk disk = {.loop = -1};
		if (runtime_disk_image_prepare(dk.dir, size_mb, img, mnt, &disk, true) != 0) {
			dprintf(2, "e2b-local-backend: cannot prepare a disk image: %s\n", strerror(errno));
			rmdir(mnt);
		}
		int n = snprintf(answer, sizeof answer, "%d %d\n", slot, disk.mounted ? disk.loop : -1);
		if (write(sock, answer, (size_t)n) != n)
			_exit(1);
	}
}

/* Takes one answer of the helper: a ready image joins the pool. */
static void answered(const char *line)
{
	int slot, loop;
	if (sscanf(line, "%d %d", &slot, &loop) != 2)
		return;
	if (slot < 0 || slot >= RUNTIME_DISK_POOL || !(dk.busy & 1u << slot))
		return;
	dk.pending--;
	if (loop >= 0)
		dk.ready[dk.nready++] = (struct pool_image){.slot = slot, .loop = loop};
	else
		dk.busy &= ~(1u << slot);
}

static void helper_gone(void)
{
	if (dk.ev) {
		event_free(dk.ev);
		dk.ev = NULL;
	}
	if (dk.sock >= 0)
		close(dk.sock);
	if (dk.helper > 0)
		waitpid(dk.helper, NULL, WNOHANG); /* or the process manager reaped it */
	dk.sock = -1;
	dk.helper = -1;
	dk.pending = 0; /* nothing more is asked for: the pool empties, images are made on demand */
}

/* Reads what the helper answered; false when it has gone. */
static bool read_answers(void)
{
	ssize_t n = read(dk.sock, dk.in + dk.in_len, sizeof dk.in - dk.in_len);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		helper_gone();
		return false;
	}
	if (n > 0)
		dk.in_len += (size_t)n;
	char line[64];
	while (take_line(dk.in, &dk.in_len, sizeof dk.in, line, sizeof line))
		answered(line);
	return true;
}

static void on_answer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	read_answers();
}

/* Blocks until the helper has answered once more; false when it has gone
 * or took too long. */
static bool wait_answer(void)
{
	struct pollfd pfd = {.fd = dk.sock, .events = POLLIN};
	int pending = dk.pending;
	while (dk.sock >= 0 && dk.pending == pending) {
		int r = poll(&pfd, 1, HELPER_WAIT_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !read_answers())
			return false;
	}
	return dk.sock >= 0;
}

/* Asks the helper for an image in every free slot. */
static void refill(void)
{
	for (int slot = 0; dk.sock >= 0 && slot < RUNTIME_DISK_POOL; slot++) {
		if (dk.busy & 1u << slot)
			continue;
		char ask[64];
		int n = snprintf(ask, sizeof ask, "%d %d\n", slot, SANDBOX_DEFAULT_DISK_SIZE_MB);
		if (send(dk.sock, ask, (size_t)n, MSG_NOSIGNAL) != n) {
			helper_gone();
			return;
		}
		dk.busy |= 1u << slot;
		dk.pending++;
	}
}

static void on_refill(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	refill();
}

static int start_helper(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		prctl(PR_SET_NAME, "e2b-sbx-disks");
		/* It stops when the backend closes its socket, not on a terminal's ^C. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		if (child_fds(sv[1]) != 0)
			_exit(1);
		helper_main(3);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -1;
	}
	dk.helper = pid;
	dk.sock = sv[0];
	fcntl(dk.sock, F_SETFL, fcntl(dk.sock, F_GETFL) | O_NONBLOCK);
	dk.ev = event_new(runtime_self()->base, dk.sock, EV_READ | EV_PERSIST, on_answer, NULL);
	dk.refill_ev = evtimer_new(runtime_self()->base, on_refill, NULL);
	if (!dk.ev || !dk.refill_ev || event_add(dk.ev, NULL) != 0) {
		helper_gone();
		return -1;
	}
	return 0;
}

/* Moves a pool image into a sandbox's directory: img and mnt. */
static int move_in(const struct pool_image *p, const char *img, const char *mnt)
{
	char from_img[PATH_MAX], from_mnt[PATH_MAX];
	pool_paths(p->slot, from_img, from_mnt);
	dk.busy &= ~(1u << p->slot); /* pool-<slot>/ stays, for the slot's next image */
	if (rename(from_img, img) == 0 && mkdir(mnt, 0755) == 0 &&
		mount(from_mnt, mnt, NULL, MS_MOVE, NULL) == 0)
		return 0;
	/* Not expected; drop the image (autoclear detaches its device). */
	int err = errno;
	umount2(from_mnt, MNT_DETACH);
	unlink(from_img);
	unlink(img);
	errno = err;
	return -1;
}

/* --- the interface -------------------------------------------------------------- */

int runtime_disk_init(const char *state_root, struct err *err)
{
	dk.dir = malloc(strlen(state_root) + 8);
	if (!dk.dir)
		return err_set(err, ENOMEM, "out of memory");
	sprintf(dk.dir, "%s/disks", state_root);
	if (mkdir(dk.dir, 0700) != 0 && errno != EEXIST)
		return err_set(err, errno, "cannot create %s: %s", dk.dir, strerror(errno));
	if (start_helper() != 0)
		return err_set(err, errno, "cannot start the disk image helper: %s", strerror(errno));
	refill();
	return 0;
}

void runtime_disk_shutdown(void)
{
	if (!dk.dir)
		return;
	if (dk.sock >= 0) {
		/* It finishes what it was asked for (so every image it mounted is
		 * named in an answer), then sees the end and exits. */
		shutdown(dk.sock, SHUT_WR);
		while (dk.pending > 0 && wait_answer())
			;
		pid_t helper = dk.helper;
		bool stuck = dk.pending > 0;
		helper_gone();
		if (stuck)
			kill(helper, SIGKILL); /* what it mounted is found below */
		while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
			;
	}
	for (int i = 0; i < dk.nready; i++) {
		char img[PATH_MAX], mnt[PATH_MAX];
		pool_paths(dk.ready[i].slot, img, mnt);
		runtime_disk_image_unmount(mnt);
	}
	runtime_disk_image_unmount_below(dk.dir); /* anything a helper that died half-way left */
	for (int ms = 0; ms < HELPER_WAIT_MS && runtime_disk_image_loops_under(dk.dir, false) > 0; ms += 5)
		runtime_sleep_ms(5);
	if (dk.refill_ev)
		event_free(dk.refill_ev);
	dk.refill_ev = NULL;
	tree_remove(dk.dir);
	free(dk.dir);
	dk.dir = NULL;
	dk.nready = dk.pending = 0;
	dk.busy = 0;
	dk.in_len = 0;
}

int runtime_disk_check_space(int size_mb, struct err *err)
{
	struct statvfs vfs;
	if (!dk.dir || statvfs(dk.dir, &vfs) != 0)
		return 0;
	unsigned long long free_mb = ((unsigned long long)vfs.f_bavail * vfs.f_frsize) >> 20;
	if (free_mb >= (unsigned long long)size_mb)
		return 0;
	return err_set(err, 507, "diskSizeMB %d is more than the host's free disk space (%llu MiB)", size_mb,
		free_mb);
}

int runtime_disk_attach(const char *dir, int size_mb, struct runtime_disk *disk)
{
	char img[PATH_MAX], mnt[PATH_MAX];
	snprintf(img, sizeof img, "%s/disk.img", dir);
	snprintf(mnt, sizeof mnt, "%s/" RUNTIME_DISK_MOUNT, dir);
	disk->loop = -1;
	disk->mounted = false;
	if (size_mb == SANDBOX_DEFAULT_DISK_SIZE_MB) {
		/* An empty pool: the helper's next image is nearer than a new one. */
		if (dk.nready == 0) {
			refill(); /* what the timer would ask for */
			if (dk.pending > 0)
				wait_answer();
		}
		if (dk.nready > 0) {
			struct pool_image p = dk.ready[--dk.nready];
			int rc = move_in(&p, img, mnt);
			/* The slot is free again. Asked for in the next loop turn, once
			 * this create is answered: the helper's loop device and mount
			 * then do not coincide with the new sandbox's start, which they
			 * measurably slow down. */
			struct timeval now = {0, 0};
			evtimer_add(dk.refill_ev, &now);
			if (rc == 0) {
				disk->loop = p.loop;
				disk->mounted = true;
				return 0;
			}
		}
	}
	refill();
	/* Warming up here would cost the event loop as much as it saves. */
	return runtime_disk_image_prepare(dk.dir, size_mb, img, mnt, disk, false);
}
