/* A sandbox binds its init's binary into its own mounts (a checkpoint finds
 * the file it runs from there). A bind of the file where it was built or
 * installed would name that host path in the sandbox's mountinfo; a bind of
 * a file on a tmpfs names only "/e2b-sandbox-init". The tmpfs is mounted in
 * the backend's private mount namespace, on a directory the sandbox's ids
 * can walk to (the init binds it after entering its user namespace), so the
 * host sees only an empty directory in /dev/shm while the backend runs. */
#define _GNU_SOURCE
#include "runtime/runtime_init_copy.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char copy_dir[] = "/dev/shm/e2b-sandbox-init.XXXXXX";
static bool mounted;

static bool copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0555);
	bool ok = in >= 0 && out >= 0;
	char buf[65536];
	ssize_t n;
	while (ok && (n = read(in, buf, sizeof buf)) != 0)
		ok = n > 0 && write(out, buf, (size_t)n) == n;
	int saved = errno;
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ok = false;
	errno = ok ? 0 : (saved ? saved : EIO);
	return ok;
}

int runtime_init_copy(struct err *err)
{
	if (!mkdtemp(copy_dir))
		return err_set(err, errno, "cannot make a directory for the sandbox init: %s",
			strerror(errno));
	if (mount("e2b-init", copy_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=8m") != 0) {
		int e = errno;
		rmdir(copy_dir);
		return err_set(err, e, "cannot mount a tmpfs for the sandbox init: %s", strerror(e));
	}
	mounted = true;
	char path[sizeof copy_dir + 32];
	snprintf(path, sizeof path, "%s/e2b-sandbox-init", copy_dir);
	if (!copy_file(runtime_self()->init_path, path) ||
		mount(NULL, copy_dir, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
		return err_set(err, errno, "cannot copy the sandbox init: %s", strerror(errno));
	char *copy = strdup(path);
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (!copy || fd < 0) {
		free(copy);
		if (fd >= 0)
			close(fd);
		return err_set(err, ENOMEM, "cannot open the sandbox init's copy");
	}
	free(runtime_self()->init_path);
	if (runtime_self()->init_fd >= 0)
		close(runtime_self()->init_fd);
	runtime_self()->init_path = copy;
	runtime_self()->init_fd = fd;
	return 0;
}

void runtime_init_copy_remove(void)
{
	if (!mounted)
		return;
	umount2(copy_dir, MNT_DETACH);
	rmdir(copy_dir);
	mounted = false;
}
