/* Small control files, and sleeping (runtime_control.h). */
#define _GNU_SOURCE
#include "runtime/runtime_control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void runtime_sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	/* The memory controller answers EINTR when a signal (SIGCHLD of any
	 * command) arrives while it applies a limit: the write is simply retried. */
	ssize_t n;
	int tries = 0;
	do
		n = write(fd, text, len);
	while (n < 0 && errno == EINTR && ++tries < 100);
	int err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)len ? 0 : -1;
}

int runtime_write_at(const char *dir, const char *file, const char *text)
{
	char path[512];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return write_file(path, text);
}

int runtime_read_at(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t got = 0;
	while (got < size - 1) {
		ssize_t n = read(fd, buf + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0) {
				int err = errno;
				close(fd);
				errno = err;
				return -1;
			}
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return 0;
}
