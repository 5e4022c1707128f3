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

/* The device nodes a sandbox may open: the harmless ones and its own ptys
 * (Unix98 pty slaves are major 136; a devpts of at most 256 never leaves
 * it). "m" lets overlayfs copy one of them up (chmod, chown), which makes
 * the node as the sandbox's process; making any node needs CAP_MKNOD over
 * the machine as well, which no sandbox has. The kernel exempts overlay's
 * whiteouts (0:0) from this list. Everything else, such as the template's
 * /dev/console (5:1, the host's console), fails with EPERM. */
static const char *const sandbox_devices[] = {
	"c 1:3 rwm",  /* null */
	"c 1:5 rwm",  /* zero */
	"c 1:7 rwm",  /* full */
	"c 1:8 rwm",  /* random */
	"c 1:9 rwm",  /* urandom */
	"c 5:0 rwm",  /* tty */
	"c 5:2 rwm",  /* ptmx */
	"c 136:* rwm", /* pts/N */
};

int runtime_restrict_devices(const char *dir)
{
	if (runtime_write_at(dir, "devices.deny", "a") != 0)
		return -1;
	for (size_t i = 0; i < sizeof sandbox_devices / sizeof sandbox_devices[0]; i++)
		if (runtime_write_at(dir, "devices.allow", sandbox_devices[i]) != 0)
			return -1;
	return 0;
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
