/* Starting a process the way envd does: argv from cmd and args, the layered
 * environment (process_argv.h), the working directory, a new session (so
 * the whole process group can be signalled), pipes or a PTY. In an isolated
 * sandbox its init starts it (runtime_spawn.h), as the requested user of the
 * sandbox, so that it is in the sandbox's one process tree; without isolation
 * the backend starts it on the host, as its own child, sharing the backend's
 * memory until it executes (clone_vfork), and reaps it (SIGCHLD). */
#define _GNU_SOURCE
#include "envd/process/process_spawn.h"

#include "envd/process/process_argv.h"
#include "http/http_connect.h"
#include "lib/child_stack.h"
#include "lib/clone3.h"
#include "lib/fd_limit.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_spawn.h"

#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- file descriptors ----------------------------------------------------- */

/* Makes fd close-on-exec and at least 3 (so dup2 onto 0..2 in the child
 * never clobbers another pipe end). -1 on failure (fd is closed). */
static int private_fd(int fd)
{
	if (fd < 0)
		return -1;
	if (fd < 3) {
		int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		return moved;
	}
	int flags = fcntl(fd, F_GETFD);
	if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static int private_pipe(int fds[2])
{
	int raw[2];
	if (pipe(raw) != 0)
		return -1;
	fds[0] = private_fd(raw[0]);
	fds[1] = private_fd(raw[1]);
	if (fds[0] < 0 || fds[1] < 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		return -1;
	}
	return 0;
}

static void close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* --- the child --------------------------------------------------------------- */

static void close_from_3(void)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = 3; fd < max; fd++)
		close(fd);
}

/* What the child needs, all made by the parent: the child shares the
 * backend's memory (clone_vfork), so it allocates nothing and calls nothing
 * of glibc that takes a lock. */
struct child_args {
	const struct proc_spawn *spec;
	pid_t parent; /* what getppid() must say */
	char **argv, **envp;
	char **paths;              /* where to look for argv[0], in order */
	char **sh_argv;            /* argv with /bin/sh for /bin/bash, for an image without bash; else NULL */
	int in_fd, out_fd, err_fd; /* to become 0, 1, 2 (-1: a pty's) */
	int pty_slave;             /* a pty's terminal end: its controlling terminal and 0, 1, 2; else -1 */
};

/* write(2) of a message and an errno's text, without stdio or locks. */
static void child_say(const char *a, const char *b, int e)
{
	const char *text = strerrordesc_np(e);
	const char *parts[] = {a, b, ": ", text ? text : "unknown error", "\n"};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			return;
}

/* Runs in the child: never returns. */
__attribute__((noreturn)) static void child_exec(struct child_args *c)
{
	/* Born with every signal blocked (spawn_*): make every disposition
	 * the default before unblocking, so a signal meant for this process (a
	 * process.signal racing its start) acts on it, never on the backend's
	 * handlers, which would write to the event loop the parent shares. The
	 * backend ignores SIGPIPE, which exec would keep: reset too. (The
	 * child's dispositions are its own: no CLONE_SIGHAND.) */
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int sig = 1; sig < 65; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (c->pty_slave >= 0) {
		/* login_tty(3)'s steps: a session whose controlling terminal is
		 * the pty. */
		setsid();
		if (ioctl(c->pty_slave, TIOCSCTTY, 0) != 0 || dup2(c->pty_slave, 0) < 0 ||
			dup2(c->pty_slave, 1) < 0 || dup2(c->pty_slave, 2) < 0)
			_exit(125);
	} else if (c->out_fd >= 0) {
		setsid();
		if (dup2(c->in_fd, 0) < 0 || dup2(c->out_fd, 1) < 0 || dup2(c->err_fd, 2) < 0)
			_exit(125);
	}
	/* The descriptor limit the backend was started with, not the one it
	 * raised for itself (lib/fd_limit.h). */
	const struct rlimit *nofile = fd_limit_started();
	if (nofile)
		setrlimit(RLIMIT_NOFILE, nofile);
	/* If the backend dies without cleaning up, its direct children die too. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != c->parent)
		_exit(137);
	close_from_3();
	if (chdir(c->spec->cwd) != 0) {
		child_say("chdir ", c->spec->cwd, errno);
		_exit(127);
	}
	/* execvp's search, over the paths the parent made from the sandbox's
	 * PATH: the first that is not missing decides. */
	int e = ENOENT;
	for (char **p = c->paths; *p; p++) {
		execve(*p, c->argv, c->envp);
		if (errno == EACCES)
			e = EACCES; /* as execvp: remembered, the search goes on */
		else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE && errno != ENODEV &&
			errno != ETIMEDOUT) {
			e = errno;
			break;
		}
	}
	if (e == ENOENT && c->sh_argv)
		execve(c->sh_argv[0], c->sh_argv, c->envp);
	child_say("exec: ", c->argv[0], e);
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

#define CHILD_STACK (256 * 1024)

#ifdef __SANITIZE_THREAD__
/* ThreadSanitizer keeps the handlers it wraps and the thread's state in
 * memory a CLONE_VM child would share: the child's resets would become the
 * backend's (SIGCHLD and SIGTERM lost). Under TSan the child is a copy, made
 * by fork, which TSan knows. */
static pid_t start_child(struct child_args *c, char *stack_top)
{
	(void)stack_top;
	pid_t pid = fork();
	if (pid == 0)
		child_exec(c);
	return pid;
}
#else
static int child_main(void *arg)
{
	child_exec(arg);
}

static pid_t start_child(struct child_args *c, char *stack_top)
{
	return clone(child_main, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
}
#endif

/* A child that shares the backend's memory until it executes (vfork's
 * semantics, as posix_spawn makes them): no copy of the backend's page
 * tables, and the child runs at once on this CPU while the loop waits the
 * ~0.3 ms until its exec; a fork cost 0.3-0.5 ms more per command, and as
 * much again to wake the child on the other, idle CPU, and left the
 * backend's pages copy-on-write. Every signal is blocked around it: the
 * child starts with the backend's handlers, and child_exec resets them
 * before it unblocks.
 *
 * The child's stack is the calling thread's own (lib/child_stack.h): the
 * parent waits while the child uses it, so it is free again when clone
 * returns. */
static pid_t clone_vfork(struct child_args *c)
{
	static __thread char *stack;
	char *top = child_stack_top(&stack, CHILD_STACK);
	if (!top)
		return -1;
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t pid = start_child(c, top);
	int e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return pid;
}

/* --- starting -------------------------------------------------------------- */

/* A start the sandbox refused: a full sandbox (EAGAIN) is the client's to
 * resolve, one whose init has ended (ESRCH) can start nothing more. */
static void sandbox_refused(struct err *err)
{
	if (errno == EAGAIN)
		err_set(err, CONNECT_RESOURCE_EXHAUSTED,
			"the sandbox has reached its limit "
			"of %d processes (pids.max): end some before starting more",
			SANDBOX_PIDS_MAX);
	else
		err_set(err, CONNECT_UNAVAILABLE,
			"the sandbox's init process has ended (killed "
			"from outside, or out of memory), and with it every process of the sandbox: it "
			"can start nothing more; kill it and create another");
}

/* --- in an isolated sandbox: its init starts it ------------------------------ */

static int spawn_in_init(const struct proc_spawn *spec, const struct child_args *c, struct proc_spawned *out,
	struct err *err)
{
	struct runtime_command cmd = {.argv = c->argv,
		.envp = c->envp,
		.paths = c->paths,
		.cwd = spec->cwd,
		.account = spec->account,
		.pty = spec->pty,
		.stdin_pipe = spec->stdin_pipe,
		.cols = spec->cols,
		.rows = spec->rows};
	struct runtime_started st;
	enum runtime_spawn_step step;
	if (!runtime_sandbox_alive(spec->sb)) {
		errno = ESRCH;
		sandbox_refused(err);
		return -1;
	}
	if (runtime_spawn(spec->sb, &cmd, &st, &step) != 0) {
		if (step == RUNTIME_SPAWN_PTY)
			err_set(err, CONNECT_INVALID_ARGUMENT,
				"error starting pty with command '%s' in dir '%s' with '%u' cols and '%u' rows: %s",
				spec->cmd, spec->cwd, spec->cols, spec->rows, strerror(errno));
		else if (step == RUNTIME_SPAWN_PIPES)
			err_set(err, CONNECT_INTERNAL, "error creating pipes for command '%s': %s", spec->cmd,
				strerror(errno));
		else if ((step == RUNTIME_SPAWN_FORK && errno == EAGAIN) ||
			(step == RUNTIME_SPAWN_INIT && errno == ESRCH))
			sandbox_refused(err);
		else
			err_set(err, CONNECT_INTERNAL, "error starting process '%s': %s", spec->cmd,
				errno == EPROTO ? "the sandbox's init answered out of turn"
						: strerror(errno));
		return -1;
	}
	*out = (struct proc_spawned){.pid = 0,
		.ns_pid = st.ns_pid,
		.pidfd = st.pidfd,
		.init_child = true,
		.out_fd = st.out_fd,
		.err_fd = st.err_fd,
		.in_fd = st.in_fd};
	return 0;
}

/* --- without isolation: the backend's own child --------------------------- */

/* Starts c's child; -1 with err set (the caller closes the descriptors it
 * made for it). */
static pid_t start_on_host(const struct proc_spawn *spec, struct child_args *c, struct err *err)
{
	pid_t pid = clone_vfork(c);
	if (pid < 0)
		err_set(err, CONNECT_INTERNAL, "error starting process '%s': %s", spec->cmd, strerror(errno));
	return pid;
}

static int spawn_pty(const struct proc_spawn *spec, struct child_args *c, struct proc_spawned *out,
	struct err *err)
{
	struct winsize ws = {.ws_row = spec->rows, .ws_col = spec->cols};
	int master = -1, slave = -1, input = -1;
	if (openpty(&master, &slave, NULL, NULL, &ws) != 0) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"error starting pty with command '%s' in dir '%s' with '%u' cols and '%u' rows: %s",
			spec->cmd, spec->cwd, spec->cols, spec->rows, strerror(errno));
		return -1;
	}
	master = private_fd(master);
	slave = private_fd(slave);
	input = master >= 0 ? fcntl(master, F_DUPFD_CLOEXEC, 3) : -1;
	if (master < 0 || slave < 0 || input < 0 || set_nonblocking(master) != 0) {
		err_set(err, CONNECT_INTERNAL, "error setting up the pty: %s", strerror(errno));
		goto fail;
	}
	c->pty_slave = slave;
	pid_t pid = start_on_host(spec, c, err);
	if (pid < 0)
		goto fail;
	close(slave);
	out->pid = pid;
	out->ns_pid = pid;
	out->pidfd = -1;
	out->init_child = false;
	out->out_fd = master;
	out->err_fd = -1;
	out->in_fd = input; /* shares the master's O_NONBLOCK */
	return 0;
fail:
	if (master >= 0)
		close(master);
	if (slave >= 0)
		close(slave);
	if (input >= 0)
		close(input);
	return -1;
}

static int spawn_pipes(const struct proc_spawn *spec, struct child_args *c, struct proc_spawned *out,
	struct err *err)
{
	int o[2] = {-1, -1}, e[2] = {-1, -1}, in[2] = {-1, -1};
	int null_fd = -1;
	if (private_pipe(o) != 0 || private_pipe(e) != 0 ||
		(spec->stdin_pipe ? private_pipe(in) : (null_fd = private_fd(open("/dev/null", O_RDONLY)))) <
			0 ||
		set_nonblocking(o[0]) != 0 || set_nonblocking(e[0]) != 0 ||
		(spec->stdin_pipe && set_nonblocking(in[1]) != 0)) {
		err_set(err, CONNECT_INTERNAL, "error creating pipes for command '%s': %s", spec->cmd,
			strerror(errno));
		goto fail;
	}
	c->in_fd = spec->stdin_pipe ? in[0] : null_fd;
	c->out_fd = o[1];
	c->err_fd = e[1];
	pid_t pid = start_on_host(spec, c, err);
	if (pid < 0)
		goto fail;
	close(o[1]);
	close(e[1]);
	if (in[0] >= 0)
		close(in[0]);
	if (null_fd >= 0)
		close(null_fd);
	out->pid = pid;
	out->ns_pid = pid;
	out->pidfd = -1;
	out->init_child = false;
	out->out_fd = o[0];
	out->err_fd = e[0];
	out->in_fd = in[1];
	return 0;
fail:
	close_pair(o);
	close_pair(e);
	close_pair(in);
	if (null_fd >= 0)
		close(null_fd);
	return -1;
}

int process_spawn_start(const struct proc_spawn *spec, struct proc_spawned *out, struct err *err)
{
	/* Looked up inside the sandbox's root: a host path does not exist there,
	 * and ".." or a symbolic link cannot leave it. */
	int is_dir = runtime_path_is_dir(spec->sb, spec->cwd);
	if (is_dir < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EXDEV)) {
		err_set(err, CONNECT_INVALID_ARGUMENT, "cwd '%s' does not exist", spec->cwd);
		return -1;
	}
	if (is_dir == 0) {
		err_set(err, CONNECT_INVALID_ARGUMENT,
			"error starting process '%s': chdir %s: not a directory", spec->cmd, spec->cwd);
		return -1;
	}
	struct child_args c = {.spec = spec,
		.parent = getpid(),
		.argv = process_argv_new(spec->cmd, spec->args),
		.envp = process_argv_env(spec),
		.paths = process_argv_paths(spec->cmd, spec->path_env),
		.in_fd = -1,
		.out_fd = -1,
		.err_fd = -1,
		.pty_slave = -1};
	c.sh_argv = c.argv ? process_argv_sh_fallback(c.argv) : NULL;
	int rc = -1;
	if (!c.argv || !c.envp || !c.paths)
		err_set(err, CONNECT_INTERNAL, "out of memory");
	else if (runtime_isolated())
		rc = spawn_in_init(spec, &c, out, err);
	else
		rc = spec->pty ? spawn_pty(spec, &c, out, err) : spawn_pipes(spec, &c, out, err);
	process_argv_free(c.argv);
	process_argv_free(c.envp);
	process_argv_free(c.paths);
	free(c.sh_argv);
	return rc;
}
