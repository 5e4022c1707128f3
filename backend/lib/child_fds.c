/* A forked helper's descriptors (child_fds.h). */
#define _GNU_SOURCE
#include "lib/child_fds.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

int child_fds(int fd)
{
	if (dup2(fd, 3) != 3)
		return -1;
	syscall(SYS_close_range, 4U, ~0U, 0U);
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		dup2(null_fd, 0);
		dup2(null_fd, 1);
		close(null_fd);
	}
	return 0;
}
