/* cgroup v1 control files of the sandboxes, and small helpers (runtime_cgroup.h). */
#define _GNU_SOURCE
#include "runtime/runtime_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
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
	snprintf(path, sizeof path, "%s/%s", dir, file);
	return write_file(path, text);
}

/* Kills everything in one sandbox cgroup (all controllers) and removes it. */
void runtime_drain_cgroup(const char *const dirs[RT_NCTRL])
{
	if (dirs[RT_FREEZER])
		runtime_write_at(dirs[RT_FREEZER], "freezer.state", "THAWED");
	for (int tries = 0; tries < 2000; tries++) {
		bool any = false;
		for (int i = 0; i < RT_NCTRL; i++) {
			if (!dirs[i])
				continue; /* a sandbox whose start failed half-way */
			char path[512];
			snprintf(path, sizeof path, "%s/cgroup.procs", dirs[i]);
			FILE *f = fopen(path, "re");
			if (!f)
				continue;
			int pid;
			while (fscanf(f, "%d", &pid) == 1) {
				kill(pid, SIGKILL);
				any = true;
			}
			fclose(f);
		}
		if (!any)
			break;
		runtime_sleep_ms(5);
	}
	for (int i = 0; i < RT_NCTRL; i++)
		if (dirs[i])
			rmdir(dirs[i]);
}
