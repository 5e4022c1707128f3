/* The state directory's lock (store_lock.h). */
#define _GNU_SOURCE
#include "store/store_lock.h"

#include "lib/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int store_lock_take(const char *state_root, int pid, struct err *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/lock", state_root);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err_set(err, errno, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		char text[32] = "";
		ssize_t n = e == EWOULDBLOCK ? pread(fd, text, sizeof text - 1, 0) : -1;
		int holder = n > 0 ? atoi(text) : 0;
		if (e != EWOULDBLOCK)
			err_set(err, e, "cannot lock %s: %s", path, strerror(e));
		else if (holder > 0)
			err_set(err, 0, "state directory %s is in use by another backend (pid %d)",
				state_root, holder);
		else
			err_set(err, 0, "state directory %s is in use by another backend", state_root);
		close(fd);
		return -1;
	}
	char text[32];
	int len = snprintf(text, sizeof text, "%d\n", pid);
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
		/* The lock holds without the pid: only the message loses it. */
	}
	return fd;
}
