/* A command between the init's clone and its exec (init_child.h). It runs
 * in the init's memory: the syscall policy is installed already
 * (inherited), it is root of the sandbox's user namespace with every
 * capability there, in the sandbox's namespaces and cgroups, with every
 * signal's default disposition and the bounding set a command keeps
 * (init_serve_prepare). What is left is to become the command. */
#define _GNU_SOURCE
#include "init_child.h"

#include "init_raw.h"

#include "lib/init_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What it says before it exits, on its own stderr (the stream's); e is an
 * errno. strerrordesc_np only reads a table. */
static void say(const char *a, const char *b, long e)
{
	const char *text = strerrordesc_np((int)e);
	const char *parts[] = {a, b, ": ", text ? text : "unknown error", "\n"};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (init_raw(SYS_write, 2, parts[i], strlen(parts[i])) < 0)
			return;
}

__attribute__((noreturn)) static void leave(int code)
{
	for (;;)
		init_raw(SYS_exit_group, code, 0, 0);
}

/* fd as descriptor to, kept open across execve. */
static long move_fd(int fd, int to)
{
	return fd == to ? init_raw(SYS_fcntl, to, F_SETFD, 0) : init_raw(SYS_dup3, fd, to, 0);
}

/* A command's 0, 1 and 2, in a session of its own. */
static void standard_fds(const struct init_child_args *a)
{
	init_raw(SYS_setsid, 0, 0, 0);
	if (a->slave >= 0) {
		/* login_tty(3)'s steps: the pty becomes the session's terminal. */
		if (init_raw(SYS_ioctl, a->slave, TIOCSCTTY, 0) != 0 || move_fd(a->slave, 0) < 0 ||
			move_fd(a->slave, 1) < 0 || move_fd(a->slave, 2) < 0)
			leave(125);
		return;
	}
	long in = a->in >= 0
		? a->in
		: init_raw6(SYS_openat, AT_FDCWD, (long)"/dev/null", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	if (in < 0 || move_fd((int)in, 0) < 0 || move_fd(a->out, 1) < 0 || move_fd(a->err, 2) < 0)
		leave(125);
}

/* Takes on the account's ids (the bounding set, what the command's execve
 * may keep, is the init's). 0 or -errno. */
static long become(const struct init_child_args *a)
{
	const struct init_command *c = &a->cmd;
	long rc;
	if (a->flags & INIT_SPAWN_NO_GROUPS) {
		rc = init_raw(SYS_setgid, 0, 0, 0);
		return rc != 0 ? rc : init_raw(SYS_setuid, 0, 0, 0);
	}
	if ((rc = init_raw(SYS_setgroups, c->head->ngroups, c->groups, 0)) != 0 ||
		(rc = init_raw(SYS_setgid, c->head->gid, 0, 0)) != 0)
		return rc;
	return init_raw(SYS_setuid, c->head->uid, 0, 0);
}

int init_child_main(void *args)
{
	struct init_child_args *a = args;
	struct init_command *c = &a->cmd;
	/* The init's mask (SIGCHLD blocked) is not the command's. */
	uint64_t none = 0;
	init_raw6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&none, 0, sizeof none, 0, 0);
	standard_fds(a);
	struct rlimit nofile = {.rlim_cur = c->head->nofile_cur, .rlim_max = c->head->nofile_max};
	if (nofile.rlim_max > 0)
		init_raw6(SYS_prlimit64, 0, RLIMIT_NOFILE, (long)&nofile, 0, 0, 0);
	long rc = become(a);
	if (rc != 0) {
		say("cannot start the command: ", "its user", -rc);
		leave(125);
	}
	/* Changing ids made the memory it shares with the init as dumpable as
	 * fs.suid_dumpable says: 0 (the default) and 2 keep it out of the
	 * user's reach; 1 would not, so it is made not dumpable again. */
	init_raw(SYS_prctl, PR_SET_DUMPABLE, 0, 0);
	init_raw(SYS_close_range, 3U, ~0U, 0U);
	rc = init_raw(SYS_chdir, c->cwd, 0, 0);
	if (rc != 0) {
		say("chdir ", c->cwd, -rc);
		leave(127);
	}
	/* execvp's search over the paths the backend made from the sandbox's
	 * PATH: the first that is not missing decides. */
	long e = ENOENT;
	for (char **p = c->paths; *p; p++) {
		long err = -init_raw(SYS_execve, *p, c->argv, c->envp);
		if (err == EACCES)
			e = EACCES; /* as execvp: remembered, the search goes on */
		else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV &&
			err != ETIMEDOUT) {
			e = err;
			break;
		}
	}
	/* An image without bash (busybox, FROM scratch): E2B's /bin/bash -l -c
	 * runs as /bin/sh -l -c, as the backend's own child does. */
	if (e == ENOENT && strcmp(c->argv[0], "/bin/bash") == 0) {
		static char sh[] = "/bin/sh";
		char *bash = c->argv[0];
		c->argv[0] = sh;
		init_raw(SYS_execve, sh, c->argv, c->envp);
		c->argv[0] = bash;
	}
	say("exec: ", c->argv[0], e);
	leave(e == ENOENT || e == ENOTDIR ? 127 : 126);
}
