/* The backend's side of lib/init_wire.h (runtime_spawn.h). The init
 * belongs to the sandbox: whatever it sends is checked (types, sizes,
 * descriptor counts), and every descriptor it sends is made non-blocking
 * here, whatever it was. */
#define _GNU_SOURCE
#include "runtime/runtime_spawn.h"

#include "lib/fd_limit.h"
#include "lib/fd_pass.h"
#include "lib/init_wire.h"
#include "lib/write_all.h"
#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_state.h"
#include "runtime/runtime_users.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a request waits for its answer. The init answers at once unless
 * its sandbox is frozen (a capture seals its files) or starved of CPU. */
#define REPLY_TIMEOUT_MS 60000

static void (*exit_fn)(void *ctx, struct sandbox *sb, pid_t ns_pid, int status);
static void *exit_ctx;

void runtime_spawn_on_exit(void (*fn)(void *ctx, struct sandbox *sb, pid_t ns_pid, int status), void *ctx)
{
	exit_fn = fn;
	exit_ctx = ctx;
}

/* The two socket pairs, made in the sandbox's network namespace (a thread
 * of its own joins it): a checkpoint finds the sockets of the namespaces of
 * the tree it dumps, and the init's ends must be among them. */
struct pairs {
	int ns_fd;
	int req[2], ev[2];
	int err;
};

static void *make_pairs(void *arg)
{
	struct pairs *p = arg;
	if (setns(p->ns_fd, CLONE_NEWNET) != 0 ||
		socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->req) != 0)
		p->err = errno;
	else if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, p->ev) != 0) {
		p->err = errno;
		close(p->req[0]);
		close(p->req[1]);
	}
	return NULL;
}

int runtime_spawn_sockets(struct sandbox_rt *rt, int init_fds[2])
{
	struct pairs p = {.ns_fd = rt->ns_fd[RT_NS_NET]};
	pthread_t t;
	int rc = pthread_create(&t, NULL, make_pairs, &p);
	if (rc == 0)
		pthread_join(t, NULL);
	else
		p.err = rc;
	if (p.err) {
		errno = p.err;
		return -1;
	}
	rt->req_fd = p.req[0];
	rt->ev_fd = p.ev[0];
	init_fds[0] = p.req[1];
	init_fds[1] = p.ev[1];
	return 0;
}

void runtime_spawn_close(struct sandbox_rt *rt)
{
	if (rt->ev_watch)
		event_free(rt->ev_watch);
	rt->ev_watch = NULL;
	if (rt->req_fd >= 0)
		close(rt->req_fd);
	if (rt->ev_fd >= 0)
		close(rt->ev_fd);
	rt->req_fd = rt->ev_fd = -1;
}

/* --- messages ----------------------------------------------------------------- */

_Static_assert(INIT_WIRE_FDS_MAX <= FD_PASS_MAX, "a message's descriptors fit one sendmsg");

static int send_request(int fd, struct init_wire_msg *m, size_t len, const int *fds, size_t nfds, int flags)
{
	ssize_t n = fd_pass_send(fd, m, len, fds, nfds, flags);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0 || errno == EPIPE || errno == ECONNRESET)
		errno = ESRCH; /* the init has ended */
	return -1;
}

/* What one message from the init holds. */
struct received {
	struct {
		struct init_wire_msg m;
		uint64_t keys[INIT_WIRE_FDS_MAX];
	} in;
	size_t len;
	int fds[INIT_WIRE_FDS_MAX];
	size_t nfds;
};

static void close_received(struct received *r)
{
	for (size_t i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	r->nfds = 0;
}

/* One message, waiting at most timeout_ms (-1: do not wait). 0, or -1 with
 * errno (ESRCH: the init ended or stopped answering; EAGAIN: nothing yet). */
static int receive(int fd, struct received *r, int timeout_ms)
{
	if (timeout_ms >= 0) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n;
		while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
			;
		if (n <= 0) {
			errno = ESRCH;
			return -1;
		}
	}
	union {
		char buf[CMSG_SPACE(INIT_WIRE_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = &r->in, .iov_len = sizeof r->in};
	struct msghdr mh = {.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof control.buf};
	ssize_t n;
	while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN)
			errno = ESRCH;
		return -1;
	}
	r->len = (size_t)n;
	r->nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (r->nfds < INIT_WIRE_FDS_MAX)
				r->fds[r->nfds++] = got;
			else
				close(got);
		}
	}
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || r->len < sizeof r->in.m ||
		r->len != sizeof r->in.m + (size_t)r->in.m.nkeys * sizeof(uint64_t)) {
		close_received(r); /* not a message of the protocol: the sandbox's doing */
		errno = EPROTO;
		return -1;
	}
	return 0;
}

static int request_fd(const struct sandbox *sb)
{
	if (!sb->rt || sb->rt->req_fd < 0) {
		errno = ESRCH;
		return -1;
	}
	return sb->rt->req_fd;
}

/* The answer to the request just sent: an INIT_REPLY. */
static int await_reply(int fd, struct received *r)
{
	if (receive(fd, r, REPLY_TIMEOUT_MS) != 0)
		return -1;
	if (r->in.m.type != INIT_REPLY) {
		close_received(r);
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* Sends m (len bytes, with nfds descriptors) on fd and waits for the
 * init's INIT_REPLY on answer_fd (fd but for a swap). 0 with the reply's
 * value in *value, or -1 with errno. */
static int ask(int fd, int answer_fd, struct init_wire_msg *m, size_t len, const int *fds, size_t nfds,
	int32_t *value)
{
	struct received *r = malloc(sizeof *r);
	int rc = r && send_request(fd, m, len, fds, nfds, 0) == 0 ? await_reply(answer_fd, r) : -1;
	if (rc == 0) {
		close_received(r);
		*value = r->in.m.value;
	}
	free(r);
	return rc;
}

/* The result of a request whose reply's value is an errno (0: done). */
static int reply_errno(int32_t value)
{
	if (value == 0)
		return 0;
	errno = value > 0 && value < 4096 ? value : EIO;
	return -1;
}

/* --- starting a command ------------------------------------------------------ */

static size_t strings_size(char *const *v, uint32_t *count)
{
	size_t size = 0;
	*count = 0;
	for (; v && *v; v++, (*count)++)
		size += strlen(*v) + 1;
	return size;
}

static char *put_strings(char *at, char *const *v)
{
	for (; v && *v; v++) {
		size_t n = strlen(*v) + 1;
		memcpy(at, *v, n);
		at += n;
	}
	return at;
}

/* The command as the init's child reads it (struct init_spawn_blob), in a
 * memfd. -1 with errno. */
static int command_blob(const struct runtime_command *c)
{
	struct init_spawn_blob head = {0};
	const struct sandbox_user *u = c->account;
	head.uid = (uint32_t)u->uid;
	head.gid = (uint32_t)u->gid;
	head.ngroups = u->ngroups > 0 ? (uint32_t)u->ngroups : 0;
	const struct rlimit *nofile = fd_limit_started();
	if (nofile) {
		head.nofile_cur = nofile->rlim_cur;
		head.nofile_max = nofile->rlim_max;
	}
	size_t size = sizeof head + head.ngroups * sizeof(uint32_t) + strlen(c->cwd) + 1 +
		strings_size(c->argv, &head.argc) + strings_size(c->envp, &head.envc) +
		strings_size(c->paths, &head.npaths);
	if (size > INIT_SPAWN_BLOB_MAX) {
		errno = E2BIG;
		return -1;
	}
	head.size = (uint32_t)size;
	char *buf = malloc(size);
	if (!buf)
		return -1;
	memcpy(buf, &head, sizeof head);
	char *at = buf + sizeof head;
	for (uint32_t i = 0; i < head.ngroups; i++, at += sizeof(uint32_t)) {
		uint32_t g = (uint32_t)u->groups[i];
		memcpy(at, &g, sizeof g);
	}
	memcpy(at, c->cwd, strlen(c->cwd) + 1);
	at += strlen(c->cwd) + 1;
	at = put_strings(at, c->argv);
	at = put_strings(at, c->envp);
	put_strings(at, c->paths);
	int fd = memfd_create("e2b-command", MFD_CLOEXEC);
	if (fd >= 0 && write_all(fd, buf, size) != 0) {
		int e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	free(buf);
	return fd;
}

static int nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* The descriptors of a spawn's answer, as its flags list them. */
static int take_started(struct received *r, const struct runtime_command *c, struct runtime_started *out)
{
	uint32_t f = r->in.m.flags;
	size_t want = !!(f & INIT_REPLY_HAS_PIDFD) + !!(f & INIT_REPLY_HAS_OUT) + !!(f & INIT_REPLY_HAS_ERR) +
		!!(f & INIT_REPLY_HAS_IN);
	bool shape = (f & INIT_REPLY_HAS_OUT) &&
		!(c->pty && (f & (INIT_REPLY_HAS_ERR | INIT_REPLY_HAS_IN))) &&
		(c->pty || (f & INIT_REPLY_HAS_ERR)) && (c->pty || !c->stdin_pipe || (f & INIT_REPLY_HAS_IN));
	if (r->nfds != want || !shape || r->in.m.pid <= 0) {
		close_received(r);
		errno = EPROTO;
		return -1;
	}
	size_t i = 0;
	out->ns_pid = r->in.m.pid;
	out->pidfd = f & INIT_REPLY_HAS_PIDFD ? r->fds[i++] : -1;
	out->out_fd = r->fds[i++];
	out->err_fd = f & INIT_REPLY_HAS_ERR ? r->fds[i++] : -1;
	out->in_fd = f & INIT_REPLY_HAS_IN ? r->fds[i++]
		: c->pty                   ? fcntl(out->out_fd, F_DUPFD_CLOEXEC, 3)
					   : -1;
	if (nonblocking(out->out_fd) != 0 || (out->err_fd >= 0 && nonblocking(out->err_fd) != 0) ||
		(out->in_fd >= 0 && nonblocking(out->in_fd) != 0) || (c->pty && out->in_fd < 0)) {
		int e = errno;
		int mine[] = {out->pidfd, out->out_fd, out->err_fd, out->in_fd};
		for (size_t k = 0; k < 4; k++)
			if (mine[k] >= 0)
				close(mine[k]);
		errno = e;
		return -1;
	}
	return 0;
}

int runtime_spawn(const struct sandbox *sb, const struct runtime_command *c, struct runtime_started *out,
	enum runtime_spawn_step *step)
{
	*step = RUNTIME_SPAWN_INIT;
	int fd = request_fd(sb);
	if (fd < 0)
		return -1;
	int blob = command_blob(c);
	if (blob < 0)
		return -1;
	struct init_wire_msg m = {.type = INIT_SPAWN,
		.cols = c->cols,
		.rows = c->rows,
		.flags = (c->pty ? INIT_SPAWN_PTY : 0) | (c->stdin_pipe ? INIT_SPAWN_STDIN_PIPE : 0) |
			(runtime_self()->single_id ? INIT_SPAWN_NO_GROUPS : 0)};
	int rc = send_request(fd, &m, sizeof m, &blob, 1, 0);
	close(blob);
	struct received *r = rc == 0 ? malloc(sizeof *r) : NULL;
	if (rc != 0 || !r || await_reply(fd, r) != 0) {
		free(r);
		return -1;
	}
	if (r->in.m.value != 0) {
		close_received(r);
		uint32_t f = r->in.m.flags;
		*step = f & INIT_REPLY_FAILED_PTY     ? RUNTIME_SPAWN_PTY
			: f & INIT_REPLY_FAILED_PIPES ? RUNTIME_SPAWN_PIPES
						      : RUNTIME_SPAWN_FORK;
		errno = r->in.m.value > 0 && r->in.m.value < 4096 ? r->in.m.value : EIO;
		free(r);
		return -1;
	}
	rc = take_started(r, c, out);
	free(r);
	return rc;
}

int runtime_spawn_signal(const struct sandbox *sb, pid_t ns_pid, int sig)
{
	int fd = request_fd(sb);
	if (fd < 0)
		return -1;
	struct init_wire_msg m = {.type = INIT_SIGNAL, .pid = ns_pid, .value = sig};
	return send_request(fd, &m, sizeof m, NULL, 0, MSG_DONTWAIT);
}

/* --- exit reports -------------------------------------------------------------- */

static void on_events(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct sandbox *sb = arg;
	struct received *r = malloc(sizeof *r);
	for (int i = 0; r && i < 256; i++) {
		if (receive(fd, r, -1) != 0) {
			if (errno == ESRCH && sb->rt && sb->rt->ev_watch)
				event_del(sb->rt->ev_watch); /* the init has ended */
			if (errno != EPROTO)
				break;
			continue;
		}
		close_received(r);
		const struct init_wire_msg *m = &r->in.m;
		if (m->type == INIT_EXITED && m->pid > 0 && exit_fn)
			exit_fn(exit_ctx, sb, m->pid, m->value);
	}
	free(r);
}

int runtime_spawn_watch(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt || rt->ev_fd < 0)
		return 0;
	if (rt->ev_watch)
		event_free(rt->ev_watch);
	rt->ev_watch = event_new(runtime_self()->base, rt->ev_fd, EV_READ | EV_PERSIST, on_events, sb);
	return rt->ev_watch && event_add(rt->ev_watch, NULL) == 0 ? 0 : -1;
}

/* --- checkpoints ---------------------------------------------------------------- */

int runtime_spawn_park(const struct sandbox *sb, const uint64_t *keys, const int *fds, size_t n)
{
	int fd = request_fd(sb);
	if (fd < 0)
		return -1;
	struct {
		struct init_wire_msg m;
		uint64_t keys[INIT_WIRE_FDS_MAX];
	} batch;
	int rc = 0;
	for (size_t from = 0; rc == 0 && from < n; from += INIT_WIRE_FDS_MAX) {
		size_t k = n - from < INIT_WIRE_FDS_MAX ? n - from : INIT_WIRE_FDS_MAX;
		int32_t value;
		batch.m = (struct init_wire_msg){.type = INIT_PARK, .nkeys = (uint32_t)k};
		memcpy(batch.keys, keys + from, k * sizeof *keys);
		rc = ask(fd, fd, &batch.m, sizeof batch.m + k * sizeof *keys, fds + from, k, &value);
		if (rc == 0)
			rc = reply_errno(value);
	}
	return rc;
}

int runtime_spawn_unpark(const struct sandbox *sb, void (*each)(void *ctx, uint64_t key, int fd), void *ctx)
{
	int fd = request_fd(sb);
	if (fd < 0)
		return -1;
	struct init_wire_msg m = {.type = INIT_UNPARK};
	struct received *r = malloc(sizeof *r);
	if (!r || send_request(fd, &m, sizeof m, NULL, 0, 0) != 0) {
		free(r);
		return -1;
	}
	int rc = -1;
	while (receive(fd, r, REPLY_TIMEOUT_MS) == 0) {
		if (r->in.m.type == INIT_REPLY) {
			close_received(r);
			rc = 0;
			break;
		}
		if (r->in.m.type != INIT_PARKED || r->nfds != r->in.m.nkeys) {
			close_received(r);
			errno = EPROTO;
			break;
		}
		for (size_t i = 0; i < r->nfds; i++)
			each(ctx, r->in.keys[i], r->fds[i]);
		r->nfds = 0;
	}
	free(r);
	return rc;
}

int runtime_spawn_drop(const struct sandbox *sb)
{
	int fd = request_fd(sb);
	if (fd < 0)
		return -1;
	struct init_wire_msg m = {.type = INIT_DROP};
	int32_t dropped; /* how many, which nobody needs */
	return ask(fd, fd, &m, sizeof m, NULL, 0, &dropped);
}

int runtime_spawn_dumpable(const struct sandbox *sb, bool on)
{
	int fd = request_fd(sb);
	if (fd < 0)
		return -1;
	struct init_wire_msg m = {.type = INIT_DUMPABLE, .value = on ? 1 : 0};
	int32_t value;
	return ask(fd, fd, &m, sizeof m, NULL, 0, &value) == 0 ? reply_errno(value) : -1;
}

int runtime_spawn_swap(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	int old_req = rt->req_fd, old_ev = rt->ev_fd, init_fds[2];
	if (old_req < 0 || runtime_spawn_sockets(rt, init_fds) != 0) {
		rt->req_fd = old_req;
		rt->ev_fd = old_ev;
		return -1;
	}
	struct init_wire_msg m = {.type = INIT_SWAP};
	int32_t value;
	int rc = ask(old_req, rt->req_fd, &m, sizeof m, init_fds, 2, &value);
	if (rc == 0)
		rc = reply_errno(value);
	close(init_fds[0]);
	close(init_fds[1]);
	if (rc == 0) {
		close(old_req);
		close(old_ev);
	} else {
		int e = errno;
		close(rt->req_fd);
		close(rt->ev_fd);
		rt->req_fd = old_req;
		rt->ev_fd = old_ev;
		errno = e;
	}
	return rc;
}
