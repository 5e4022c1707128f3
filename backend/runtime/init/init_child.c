/* A command between the init's fork and its exec (init_child.h). It is a
 * copy of the init: the syscall policy is installed already (inherited), it
 * is root of the sandbox's user namespace with every capability there, in
 * the sandbox's namespaces and cgroups. What is left is to become the
 * command. */
#define _GNU_SOURCE
#include "init_child.h"

#include "init_command.h"

#include "lib/init_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What it says before it exits, on its own stderr (the stream's). */
static void say(const char *a, const char *b, int e)
{
	const char *text = strerror(e);
	const char *parts[] = {a, b, ": ", text ? text : "unknown error", "\n"};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			return;
}

__attribute__((noreturn)) static void fail(const char *what, int code)
{
	say("cannot start the command: ", what, errno);
	_exit(code);
}

/* A command's 0, 1 and 2, in a session of its own. */
static void standard_fds(const struct init_child_fds *fds)
{
	setsid();
	if (fds->slave >= 0) {
		/* login_tty(3)'s steps: the pty becomes the session's terminal. */
		if (ioctl(fds->slave, TIOCSCTTY, 0) != 0 || dup2(fds->slave, 0) < 0 ||
			dup2(fds->slave, 1) < 0 || dup2(fds->slave, 2) < 0)
			_exit(125);
		return;
	}
	int in = fds->in >= 0 ? fds->in : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || dup2(in, 0) < 0 || dup2(fds->out, 1) < 0 || dup2(fds->err, 2) < 0)
		_exit(125);
}

/* The command as the backend wrote it, read in the mapped blob (which
 * stays mapped: the command's strings are there until execve). */
static int read_command(int blob, struct init_command *c)
{
	struct stat st;
	if (fstat(blob, &st) != 0)
		return -1;
	errno = EINVAL;
	if (st.st_size < (off_t)sizeof *c->head || st.st_size > (off_t)INIT_SPAWN_BLOB_MAX)
		return -1;
	size_t size = (size_t)st.st_size;
	char *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, blob, 0);
	if (base == MAP_FAILED)
		return -1;
	return init_command_parse(base, size, c);
}

/* Takes on the account's ids (the bounding set, what the command's execve
 * may keep, is the init's: cut to INIT_CAPS_KEPT once, init_serve.c). */
static int become(const struct init_command *c, uint32_t flags)
{
	if (flags & INIT_SPAWN_NO_GROUPS)
		return setgid(0) == 0 && setuid(0) == 0 ? 0 : -1;
	if (setgroups(c->head->ngroups, c->groups) != 0 || setgid(c->head->gid) != 0 ||
		setuid(c->head->uid) != 0)
		return -1;
	return 0;
}

void init_child_run(const struct init_child_fds *fds, uint32_t flags)
{
	/* The init's mask (SIGCHLD blocked) is not the command's; its
	 * dispositions are all the default already (init_serve.c). */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	standard_fds(fds);
	struct init_command c;
	if (read_command(fds->blob, &c) != 0)
		fail("its request", 125);
	struct rlimit nofile = {.rlim_cur = c.head->nofile_cur, .rlim_max = c.head->nofile_max};
	if (nofile.rlim_max > 0)
		setrlimit(RLIMIT_NOFILE, &nofile);
	if (become(&c, flags) != 0)
		fail("its user", 125);
	syscall(SYS_close_range, 3U, ~0U, 0U);
	if (chdir(c.cwd) != 0) {
		say("chdir ", c.cwd, errno);
		_exit(127);
	}
	/* execvp's search over the paths the backend made from the sandbox's
	 * PATH: the first that is not missing decides. */
	int e = ENOENT;
	for (char **p = c.paths; *p; p++) {
		execve(*p, c.argv, c.envp);
		if (errno == EACCES)
			e = EACCES; /* as execvp: remembered, the search goes on */
		else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
			errno != ETIMEDOUT) {
			e = errno;
			break;
		}
	}
	/* An image without bash (busybox, FROM scratch): E2B's /bin/bash -l -c
	 * runs as /bin/sh -l -c, as the backend's own child does. */
	if (e == ENOENT && strcmp(c.argv[0], "/bin/bash") == 0) {
		static char sh[] = "/bin/sh";
		char *bash = c.argv[0];
		c.argv[0] = sh;
		execve(sh, c.argv, c.envp);
		c.argv[0] = bash;
	}
	say("exec: ", c.argv[0], e);
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}
