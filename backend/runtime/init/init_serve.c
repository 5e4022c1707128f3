/* The init's service to the backend (init_serve.h): one loop over the
 * requests socket, SIGCHLD (a signalfd) and, while exit reports wait, the
 * events socket. Everything it keeps is in static tables, so an idle init
 * touches none of their pages. */
#define _GNU_SOURCE
#include "init_serve.h"

#include "init_clone.h"
#include "lib/fd_pass.h"
#include "lib/init_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* Commands started and not yet reported ended. pids.max (1024) bounds them
 * where the sandbox has a pids limit; without one, a start past this many
 * is refused as if it had met one. */
#define COMMANDS_MAX 4096
static struct command {
	pid_t pid; /* 0: free */
	int status;
	bool ended;               /* reaped; its report waits for room on the events socket */
	struct init_clone *clone; /* until the child has left the init's memory */
} commands[COMMANDS_MAX];
static unsigned commands_used; /* slots at or above this were never used */
static unsigned ended_unreported;

/* Descriptors held for a checkpoint (INIT_PARK). */
#define PARK_MAX 8192
static uint64_t park_key[PARK_MAX];
static int park_fd[PARK_MAX];
static unsigned parked;

static int req_fd = INIT_FD_REQUESTS, ev_fd = INIT_FD_EVENTS;

static struct command *command_of(pid_t pid)
{
	for (unsigned i = 0; i < commands_used; i++)
		if (commands[i].pid == pid)
			return &commands[i];
	return NULL;
}

static struct command *free_command(void)
{
	for (unsigned i = 0; i < commands_used; i++)
		if (commands[i].pid == 0)
			return &commands[i];
	return commands_used < COMMANDS_MAX ? &commands[commands_used++] : NULL;
}

/* --- sending ----------------------------------------------------------------- */

static int send_msg(int fd, void *msg, size_t len, const int *fds, unsigned nfds, int flags)
{
	return fd_pass_send(fd, msg, len, fds, nfds, flags) == (ssize_t)len ? 0 : -1;
}

static void reply(struct init_wire_msg *r, const int *fds, unsigned nfds)
{
	if (req_fd >= 0)
		send_msg(req_fd, r, sizeof *r, fds, nfds, 0);
}

/* Reports every ended command the events socket takes now; the rest when
 * it has room again (poll's POLLOUT). A backend that is gone reads none. */
static void report_ended(void)
{
	for (unsigned i = 0; i < commands_used && ended_unreported > 0; i++) {
		struct command *c = &commands[i];
		if (!c->ended)
			continue;
		struct init_wire_msg m = {.type = INIT_EXITED, .pid = c->pid, .value = c->status};
		if (ev_fd >= 0 && send_msg(ev_fd, &m, sizeof m, NULL, 0, MSG_DONTWAIT) != 0 &&
			(errno == EAGAIN || errno == ENOBUFS))
			return;
		c->pid = 0;
		c->ended = false;
		ended_unreported--;
	}
}

/* Frees what each child that has executed since held (init_clone.h). */
static void release_clones(void)
{
	for (unsigned i = 0; i < commands_used; i++) {
		struct command *c = &commands[i];
		if (c->clone && !init_clone_running(c->clone)) {
			init_clone_release(c->clone);
			c->clone = NULL;
		}
	}
}

/* Reaps every ended child: commands are reported, orphans of the sandbox
 * only reaped. */
static void reap(void)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct command *c = command_of(pid);
		if (!c || c->ended)
			continue;
		if (c->clone && !init_clone_running(c->clone)) /* ended: it has left */
			init_clone_release(c->clone);
		c->clone = NULL;
		c->ended = true;
		c->status = status;
		ended_unreported++;
	}
	report_ended();
}

/* --- requests ------------------------------------------------------------------ */

static void close_all(int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A pty of the sandbox's own devpts: the master for the backend, the
 * terminal end for the command. */
static int open_pty(const struct init_wire_msg *m, int *master, int *slave)
{
	*master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0)
		return -1;
	int unlock = 0;
	struct winsize ws = {.ws_row = m->rows, .ws_col = m->cols};
	if (ioctl(*master, TIOCSPTLCK, &unlock) != 0 || ioctl(*master, TIOCSWINSZ, &ws) != 0)
		return -1;
	*slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	return *slave >= 0 ? 0 : -1;
}

static void spawn(const struct init_wire_msg *m, int blob)
{
	struct init_wire_msg r = {.type = INIT_REPLY};
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, master = -1, slave = -1;
	int give[4], ngive = 0, pidfd = -1;
	release_clones();
	struct command *c = free_command();
	if (!c) {
		r.value = EAGAIN;
		r.flags = INIT_REPLY_FAILED_FORK;
	} else if (m->flags & INIT_SPAWN_PTY) {
		if (open_pty(m, &master, &slave) != 0) {
			r.value = errno;
			r.flags = INIT_REPLY_FAILED_PTY;
		}
	} else if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
		((m->flags & INIT_SPAWN_STDIN_PIPE) && pipe2(in, O_CLOEXEC) != 0)) {
		r.value = errno;
		r.flags = INIT_REPLY_FAILED_PIPES;
	}
	if (r.value == 0) {
		struct init_child_args a = {.in = in[0],
			.out = out[1],
			.err = err[1],
			.slave = slave,
			.flags = m->flags};
		struct init_clone *started = NULL;
		pid_t pid = init_clone_start(&started, blob, &a);
		if (pid < 0) {
			r.value = errno;
			r.flags = INIT_REPLY_FAILED_FORK;
		} else {
			*c = (struct command){.pid = pid, .clone = started};
			r.pid = pid;
			pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
			if (pidfd >= 0) {
				give[ngive++] = pidfd;
				r.flags |= INIT_REPLY_HAS_PIDFD;
			}
			give[ngive++] = master >= 0 ? master : out[0];
			r.flags |= INIT_REPLY_HAS_OUT;
			if (err[0] >= 0) {
				give[ngive++] = err[0];
				r.flags |= INIT_REPLY_HAS_ERR;
			}
			if (in[1] >= 0) {
				give[ngive++] = in[1];
				r.flags |= INIT_REPLY_HAS_IN;
			}
		}
	}
	reply(&r, give, (unsigned)ngive);
	int mine[] = {in[0], in[1], out[0], out[1], err[0], err[1], master, slave, pidfd, blob};
	close_all(mine, sizeof mine / sizeof mine[0]);
}

/* The group of a command the init has not reaped: its pid cannot name
 * another process yet. */
static void signal_group(pid_t pid, int sig)
{
	struct command *c = pid > 0 ? command_of(pid) : NULL;
	if (!c || c->ended || sig <= 0 || sig >= 65)
		return;
	if (kill(-pid, sig) != 0)
		kill(pid, sig);
}

static void park(const struct init_wire_msg *m, const uint64_t *keys, int *fds, unsigned nfds)
{
	struct init_wire_msg r = {.type = INIT_REPLY};
	if (m->nkeys != nfds || parked + nfds > PARK_MAX) {
		r.value = m->nkeys != nfds ? EINVAL : ENOSPC;
		close_all(fds, nfds);
	} else {
		for (unsigned i = 0; i < nfds; i++) {
			park_key[parked] = keys[i];
			park_fd[parked++] = fds[i];
		}
	}
	reply(&r, NULL, 0);
}

static void unpark(bool give_back)
{
	struct {
		struct init_wire_msg m;
		uint64_t keys[INIT_WIRE_FDS_MAX];
	} batch;
	for (unsigned from = 0; give_back && from < parked; from += INIT_WIRE_FDS_MAX) {
		unsigned n = parked - from < INIT_WIRE_FDS_MAX ? parked - from : INIT_WIRE_FDS_MAX;
		batch.m = (struct init_wire_msg){.type = INIT_PARKED, .nkeys = n};
		memcpy(batch.keys, &park_key[from], n * sizeof(uint64_t));
		if (req_fd >= 0)
			send_msg(req_fd, &batch, sizeof batch.m + n * sizeof(uint64_t), &park_fd[from], n, 0);
	}
	struct init_wire_msg r = {.type = INIT_REPLY, .value = (int32_t)parked};
	close_all(park_fd, parked);
	parked = 0;
	reply(&r, NULL, 0);
}

/* New requests and events sockets, in place of the old (closed by dup3). */
static void swap_sockets(int fds[2])
{
	struct init_wire_msg r = {.type = INIT_REPLY};
	if (dup3(fds[0], INIT_FD_REQUESTS, O_CLOEXEC) < 0 || dup3(fds[1], INIT_FD_EVENTS, O_CLOEXEC) < 0)
		r.value = errno;
	req_fd = INIT_FD_REQUESTS;
	ev_fd = INIT_FD_EVENTS;
	close_all(fds, 2);
	/* Restored: dumpable as it was dumped (INIT_DUMPABLE), not any more. */
	prctl(PR_SET_DUMPABLE, 0);
	reply(&r, NULL, 0);
}

static void set_dumpable(int32_t value)
{
	struct init_wire_msg r = {.type = INIT_REPLY};
	if (prctl(PR_SET_DUMPABLE, value ? 1 : 0) != 0)
		r.value = errno;
	reply(&r, NULL, 0);
}

/* One request. 0, or -1 once the backend has closed its end. */
static int serve_one(void)
{
	struct {
		struct init_wire_msg m;
		uint64_t keys[INIT_WIRE_FDS_MAX];
	} in;
	union {
		char buf[CMSG_SPACE(INIT_WIRE_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = &in, .iov_len = sizeof in};
	struct msghdr mh = {.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof control.buf};
	ssize_t n = recvmsg(req_fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0)
		return -1;
	int fds[INIT_WIRE_FDS_MAX];
	unsigned nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		unsigned k = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (unsigned i = 0; i < k && nfds < INIT_WIRE_FDS_MAX; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	bool whole = (size_t)n >= sizeof in.m && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
		(size_t)n == sizeof in.m + (size_t)in.m.nkeys * sizeof(uint64_t);
	if (whole && in.m.type == INIT_SPAWN && nfds == 1) {
		spawn(&in.m, fds[0]);
		return 0;
	}
	if (whole && in.m.type == INIT_PARK) {
		park(&in.m, in.keys, fds, nfds);
		return 0;
	}
	if (whole && in.m.type == INIT_SWAP && nfds == 2) {
		swap_sockets(fds);
		return 0;
	}
	close_all(fds, nfds);
	if (whole && in.m.type == INIT_SIGNAL)
		signal_group(in.m.pid, in.m.value);
	else if (whole && (in.m.type == INIT_UNPARK || in.m.type == INIT_DROP))
		unpark(in.m.type == INIT_UNPARK);
	else if (whole && in.m.type == INIT_DUMPABLE)
		set_dumpable(in.m.value);
	return 0;
}

int init_serve_prepare(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int sig = 1; sig < 65; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	for (int cap = 0; cap <= 63; cap++)
		if (!(INIT_CAPS_KEPT & (1ull << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 &&
			errno != EINVAL)
			return -1;
	return 0;
}

void init_serve(void)
{
	/* Enough descriptors to hold every command's ends across a checkpoint;
	 * a command gets the limit the backend started with (init_child.c). */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sig_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fcntl(req_fd, F_GETFD) < 0)
		req_fd = -1;
	if (fcntl(ev_fd, F_GETFD) < 0)
		ev_fd = -1;
	for (;;) {
		reap();
		struct pollfd p[3] = {
			{.fd = req_fd, .events = POLLIN},
			{.fd = sig_fd, .events = POLLIN},
			{.fd = ended_unreported > 0 ? ev_fd : -1, .events = POLLOUT},
		};
		if (poll(p, 3, sig_fd < 0 ? 1000 : -1) < 0)
			continue;
		if (p[1].revents) {
			struct signalfd_siginfo si;
			while (read(sig_fd, &si, sizeof si) > 0)
				;
		}
		if (p[0].revents && serve_one() != 0) {
			close(req_fd);
			req_fd = -1;
		}
	}
}
