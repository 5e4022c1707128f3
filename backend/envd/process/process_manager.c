/* The process table: registration, output reading with backpressure,
 * reaping (SIGCHLD), the end of a process and its 30 s retention, stdin and
 * PTY input, and the sandbox lifecycle hooks. */
#include "envd/process/process_manager.h"

#include "http/http_connect.h"
#include "http/http_conns.h"
#include "envd/process/process_internal.h"
#include "registry/registry.h"
#include "runtime/runtime.h"

#include <cJSON.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* --- timers --------------------------------------------------------------- */

int64_t monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void add_timer(struct event *ev, int64_t ms)
{
	if (ms < 0)
		ms = 0;
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
	evtimer_add(ev, &tv);
}

int ptimer_init(struct ptimer *t, struct event_base *base, void (*cb)(int, short, void *), void *arg)
{
	memset(t, 0, sizeof *t);
	t->ev = evtimer_new(base, cb, arg);
	return t->ev ? 0 : -1;
}

void ptimer_start(struct ptimer *t, int64_t ms)
{
	t->armed = true;
	if (t->suspended) {
		t->left_ms = ms;
		return;
	}
	t->due_ms = monotonic_ms() + ms;
	add_timer(t->ev, ms);
}

void ptimer_stop(struct ptimer *t)
{
	t->armed = false;
	if (t->ev)
		evtimer_del(t->ev);
}

void ptimer_suspend(struct ptimer *t)
{
	if (t->suspended)
		return;
	t->suspended = true;
	if (t->armed) {
		t->left_ms = t->due_ms - monotonic_ms();
		evtimer_del(t->ev);
	}
}

void ptimer_resume(struct ptimer *t)
{
	if (!t->suspended)
		return;
	t->suspended = false;
	if (t->armed) {
		t->due_ms = monotonic_ms() + t->left_ms;
		add_timer(t->ev, t->left_ms);
	}
}

void ptimer_free(struct ptimer *t)
{
	if (t->ev)
		event_free(t->ev);
	t->ev = NULL;
	t->armed = false;
}

/* --- the table -------------------------------------------------------------- */

static void link_tail(struct proc_manager *pm, struct proc *p)
{
	struct proc **pp = &pm->head;
	struct proc *prev = NULL;
	while (*pp) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	p->prev = prev;
	*pp = p;
}

static void unlink_proc(struct proc *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		p->pm->head = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
}

struct proc *proc_find(struct proc_manager *pm, const struct sandbox *sb, uint32_t pid,
	const char *tag, bool ended)
{
	for (struct proc *p = pm->head; p; p = p->next) {
		if (p->sb != sb || p->ended != ended)
			continue;
		if (tag ? (p->tag && strcmp(p->tag, tag) == 0) : (uint32_t)p->ns_pid == pid)
			return p;
	}
	return NULL;
}

static void close_output(struct proc_output *o)
{
	if (o->ev)
		event_free(o->ev);
	o->ev = NULL;
	o->reading = false;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

/* Answers a held input request (clearing its close callback first). */
static void answer_wait(struct proc_input_wait *w, const struct connect_error *err)
{
	if (w->evcon)
		http_conn_set_closecb(w->evcon, NULL, NULL);
	if (err)
		connect_reply_unary_error(w->req, err);
	else
		connect_reply_unary(w->req, cJSON_CreateObject());
	free(w);
}

static void unlink_wait(struct proc_input_wait *w)
{
	for (struct proc_input_wait **pp = &w->proc->waits; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			return;
		}
	}
}

/* Go's text for a write error: "write |1: broken pipe". */
static void input_error(const struct proc *p, int err_no, struct connect_error *err)
{
	char text[128];
	snprintf(text, sizeof text, "%s", strerror(err_no));
	if (text[0] >= 'A' && text[0] <= 'Z')
		text[0] = (char)(text[0] + 32);
	if (p->is_pty)
		connect_error_set(err, CONNECT_INTERNAL,
			"error writing to tty: error writing to tty of process '%d': write /dev/ptmx: %s",
			(int)p->ns_pid, text);
	else
		connect_error_set(err, CONNECT_INTERNAL,
			"error writing to stdin: error writing to stdin of process '%d': write |1: %s",
			(int)p->ns_pid, text);
}

static void close_input(struct proc *p)
{
	if (p->in_ev)
		event_free(p->in_ev);
	p->in_ev = NULL;
	if (p->in_fd >= 0)
		close(p->in_fd);
	p->in_fd = -1;
	if (p->in_queue)
		evbuffer_drain(p->in_queue, evbuffer_get_length(p->in_queue));
}

/* Answers every held request: close requests succeed, input requests fail
 * with err_no (the pipe broke or the process is gone). */
static void fail_waits(struct proc *p, int err_no)
{
	struct connect_error err;
	input_error(p, err_no, &err);
	while (p->waits) {
		struct proc_input_wait *w = p->waits;
		p->waits = w->next;
		answer_wait(w, w->close_after ? NULL : &err);
	}
}

static void proc_free(struct proc *p)
{
	unlink_proc(p);
	proc_stream_detach_all(p);
	for (int i = 0; i < 2; i++)
		close_output(&p->out[i]);
	fail_waits(p, EPIPE);
	close_input(p);
	if (p->in_queue)
		evbuffer_free(p->in_queue);
	ptimer_free(&p->lifetime);
	if (p->retention)
		event_free(p->retention);
	cJSON_Delete(p->config);
	free(p->tag);
	free(p->end_json);
	free(p);
}

void proc_update_reading(struct proc *p)
{
	bool want = !p->paused && p->blocked == 0;
	for (int i = 0; i < 2; i++) {
		struct proc_output *o = &p->out[i];
		if (o->fd < 0 || !o->ev || o->reading == want)
			continue;
		if (want)
			event_add(o->ev, NULL);
		else
			event_del(o->ev);
		o->reading = want;
	}
}

void proc_kill_group(struct proc *p, int sig)
{
	if (p->ended)
		return;
	/* The group outlives its leader while a member holds it; the leader
	 * cannot leave it (it leads its own session). */
	if (kill(-p->pid, sig) != 0 && !p->reaped)
		kill(p->pid, sig);
}

/* --- the end of a process ----------------------------------------------- */

static void on_retention_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	proc_free(arg);
}

/* EndEvent as protobuf-JSON, defaults omitted (reference §4). */
static char *end_event_json(int status)
{
	char text[96];
	proc_status_text(status, text, sizeof text);
	bool exited = WIFEXITED(status);
	int code = exited ? WEXITSTATUS(status) : -1;
	cJSON *end = cJSON_CreateObject();
	if (!end)
		return NULL;
	if (code != 0)
		cJSON_AddNumberToObject(end, "exitCode", code);
	if (exited)
		cJSON_AddTrueToObject(end, "exited");
	cJSON_AddStringToObject(end, "status", text);
	if (code != 0)
		cJSON_AddStringToObject(end, "error", text);
	char *json = cJSON_PrintUnformatted(end);
	cJSON_Delete(end);
	return json;
}

static void proc_finish(struct proc *p)
{
	p->end_json = end_event_json(p->wait_status);
	p->ended = true;
	ptimer_stop(&p->lifetime);
	fail_waits(p, EPIPE);
	close_input(p);
	proc_stream_finish_all(p);
	if (!p->sb) {
		proc_free(p);
		return;
	}
	p->retention = evtimer_new(p->pm->base, on_retention_over, p);
	if (!p->retention) {
		proc_free(p);
		return;
	}
	add_timer(p->retention, PROC_RETENTION_MS);
}

/* The end is sent once the output pipes are closed AND the process is reaped. */
static void maybe_finish(struct proc *p)
{
	if (!p->ended && p->reaped && p->out[0].fd < 0 && p->out[1].fd < 0)
		proc_finish(p);
}

static void on_output(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct proc_output *o = arg;
	struct proc *p = o->owner;
	size_t chunk = o->kind == PROC_OUT_PTY ? PROC_PTY_CHUNK : PROC_STD_CHUNK;
	ssize_t n = read(fd, p->pm->read_buf, chunk);
	if (n > 0) {
		proc_stream_broadcast_data(p, o->kind, p->pm->read_buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	/* EOF; for a PTY, EIO once no process holds the terminal any more. */
	close_output(o);
	maybe_finish(p);
}

static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	struct proc_manager *pm = arg;
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		for (struct proc *p = pm->head; p; p = p->next) {
			if (p->pid == pid && !p->reaped) {
				p->reaped = true;
				p->wait_status = status;
				maybe_finish(p);
				break;
			}
		}
	}
}

static void on_lifetime_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proc *p = arg;
	p->lifetime.armed = false;
	proc_kill_group(p, SIGKILL);
}

/* --- registration ------------------------------------------------------------ */

static int setup_output(struct proc *p, int i, enum proc_output_kind kind, int fd)
{
	struct proc_output *o = &p->out[i];
	o->owner = p;
	o->kind = kind;
	o->fd = fd;
	if (fd < 0)
		return 0;
	o->ev = event_new(p->pm->base, fd, EV_READ | EV_PERSIST, on_output, o);
	return o->ev ? 0 : -1;
}

static void on_input_writable(evutil_socket_t fd, short what, void *arg);

struct proc *proc_register(struct proc_manager *pm, struct sandbox *sb, pid_t pid, bool is_pty,
	int out_fd, int err_fd, int in_fd, cJSON *config, char *tag, int64_t lifetime_ms)
{
	struct proc *p = calloc(1, sizeof *p);
	if (p) {
		p->pm = pm;
		p->sb = sb;
		p->pid = pid;
		p->ns_pid = runtime_ns_pid(sb, pid);
		p->is_pty = is_pty;
		p->config = config;
		p->tag = tag;
		p->in_fd = in_fd;
		p->out[0].fd = p->out[1].fd = -1;
	}
	if (!p || setup_output(p, 0, is_pty ? PROC_OUT_PTY : PROC_OUT_STDOUT, out_fd) != 0 ||
	    setup_output(p, 1, PROC_OUT_STDERR, err_fd) != 0 ||
	    !(p->in_queue = evbuffer_new()) ||
	    (in_fd >= 0 && !(p->in_ev = event_new(pm->base, in_fd, EV_WRITE | EV_PERSIST,
				on_input_writable, p))) ||
	    ptimer_init(&p->lifetime, pm->base, on_lifetime_over, p) != 0) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (p) {
			p->pid = 0;
			p->reaped = true;
			/* proc_free closes what setup_output took; close the rest. */
			if (p->out[0].fd < 0 && out_fd >= 0)
				close(out_fd);
			if (p->out[1].fd < 0 && err_fd >= 0)
				close(err_fd);
			link_tail(pm, p);
			proc_free(p);
		} else {
			if (out_fd >= 0)
				close(out_fd);
			if (err_fd >= 0)
				close(err_fd);
			if (in_fd >= 0)
				close(in_fd);
			cJSON_Delete(config);
			free(tag);
		}
		return NULL;
	}
	/* A new process owns its pid and tag: drop retained exits that used them
	 * (envd does the same, so Connect never replays a stale exit). */
	for (struct proc *q = pm->head, *next; q; q = next) {
		next = q->next;
		if (q->ended && q->sb == sb &&
		    (q->ns_pid == p->ns_pid || (tag && q->tag && strcmp(q->tag, tag) == 0)))
			proc_free(q);
	}
	link_tail(pm, p);
	if (lifetime_ms > 0)
		ptimer_start(&p->lifetime, lifetime_ms);
	proc_update_reading(p);
	return p;
}

/* --- input -------------------------------------------------------------------- */

static void reply_ok(struct evhttp_request *req)
{
	connect_reply_unary(req, cJSON_CreateObject());
}

static void on_wait_conn_closed(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	struct proc_input_wait *w = arg;
	unlink_wait(w);
	/* evhttp frees a request it still holds; one it let go is ours. */
	if (!evhttp_request_get_connection(w->req))
		evhttp_request_free(w->req);
	free(w);
}

static void hold(struct proc *p, struct evhttp_request *req, bool close_after)
{
	struct proc_input_wait *w = calloc(1, sizeof *w);
	if (!w) {
		struct connect_error err;
		connect_error_set(&err, CONNECT_INTERNAL, "out of memory");
		connect_reply_unary_error(req, &err);
		return;
	}
	w->proc = p;
	w->req = req;
	w->until = p->in_queued;
	w->close_after = close_after;
	w->evcon = evhttp_request_get_connection(req);
	if (w->evcon)
		http_conn_set_closecb(w->evcon, on_wait_conn_closed, w);
	struct proc_input_wait **pp = &p->waits;
	while (*pp)
		pp = &(*pp)->next;
	*pp = w;
}

/* Answers the held requests whose bytes are all written. */
static void answer_written(struct proc *p)
{
	while (p->waits && p->waits->until <= p->in_written) {
		struct proc_input_wait *w = p->waits;
		p->waits = w->next;
		if (w->close_after) {
			close_input(p);
			p->in_closing = false;
		}
		answer_wait(w, NULL);
	}
}

static void on_input_writable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	struct proc *p = arg;
	int n = evbuffer_write(p->in_queue, fd);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		p->in_errno = errno;
		evbuffer_drain(p->in_queue, evbuffer_get_length(p->in_queue));
		event_del(p->in_ev);
		p->in_written = p->in_queued;
		/* Queued input is lost: fail it; a pending close still succeeds. */
		struct connect_error err;
		input_error(p, p->in_errno, &err);
		while (p->waits) {
			struct proc_input_wait *w = p->waits;
			p->waits = w->next;
			if (w->close_after) {
				close_input(p);
				p->in_closing = false;
			}
			answer_wait(w, w->close_after ? NULL : &err);
		}
		return;
	}
	p->in_written += (uint64_t)n;
	if (evbuffer_get_length(p->in_queue) == 0)
		event_del(p->in_ev);
	answer_written(p);
}

void proc_send_input(struct proc *p, struct evhttp_request *req, const uint8_t *data, size_t len)
{
	struct connect_error err;
	if (p->in_fd < 0 || p->in_closing) {
		if (p->is_pty)
			connect_error_set(&err, CONNECT_INTERNAL, "error writing to tty: tty closed");
		else
			connect_error_set(&err, CONNECT_INTERNAL,
				"error writing to stdin: stdin not enabled or closed");
		connect_reply_unary_error(req, &err);
		return;
	}
	if (p->in_errno) {
		input_error(p, p->in_errno, &err);
		connect_reply_unary_error(req, &err);
		return;
	}
	if (len == 0) {
		reply_ok(req);
		return;
	}
	size_t done = 0;
	if (evbuffer_get_length(p->in_queue) == 0) {
		ssize_t n = write(p->in_fd, data, len);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			p->in_errno = errno;
			input_error(p, errno, &err);
			connect_reply_unary_error(req, &err);
			return;
		}
		done = n > 0 ? (size_t)n : 0;
	}
	p->in_queued += len;
	p->in_written += done;
	if (done == len) {
		reply_ok(req);
		return;
	}
	if (evbuffer_add(p->in_queue, data + done, len - done) != 0) {
		connect_error_set(&err, CONNECT_INTERNAL, "out of memory");
		connect_reply_unary_error(req, &err);
		return;
	}
	event_add(p->in_ev, NULL);
	hold(p, req, false);
}

void proc_close_stdin(struct proc *p, struct evhttp_request *req)
{
	if (p->in_fd < 0 || p->in_closing) {
		reply_ok(req); /* envd: closing a closed (or disabled) stdin is fine */
		return;
	}
	if (evbuffer_get_length(p->in_queue) == 0) {
		close_input(p);
		reply_ok(req);
		return;
	}
	p->in_closing = true;
	hold(p, req, true);
}

/* --- sandbox lifecycle ------------------------------------------------------- */

static void on_sandbox_paused(void *ctx, struct sandbox *sb)
{
	struct proc_manager *pm = ctx;
	for (struct proc *p = pm->head; p; p = p->next) {
		if (p->sb != sb || p->ended || p->paused)
			continue;
		p->paused = true;
		if (!runtime_isolated())
			proc_kill_group(p, SIGSTOP); /* with isolation the freezer holds it */
		proc_update_reading(p);
		ptimer_suspend(&p->lifetime);
		proc_stream_set_paused(p, true);
	}
}

static void on_sandbox_resumed(void *ctx, struct sandbox *sb)
{
	struct proc_manager *pm = ctx;
	for (struct proc *p = pm->head; p; p = p->next) {
		if (p->sb != sb || p->ended || !p->paused)
			continue;
		p->paused = false;
		if (!runtime_isolated())
			proc_kill_group(p, SIGCONT);
		ptimer_resume(&p->lifetime);
		proc_stream_set_paused(p, false);
		proc_update_reading(p);
	}
}

static void on_sandbox_removing(void *ctx, struct sandbox *sb)
{
	struct proc_manager *pm = ctx;
	for (struct proc *p = pm->head, *next; p; p = next) {
		next = p->next;
		if (p->sb != sb)
			continue;
		if (p->ended) {
			proc_free(p);
			continue;
		}
		/* SIGKILL works on stopped processes too. With isolation the kernel
		 * kills the whole pid namespace anyway, and the streams are cut as
		 * E2B cuts them; without, they get the end event (signal: killed)
		 * once the process is reaped. */
		proc_kill_group(p, SIGKILL);
		p->sb = NULL;
		if (runtime_isolated())
			proc_stream_cut_all(p);
		if (p->paused) {
			p->paused = false;
			ptimer_resume(&p->lifetime);
			proc_stream_set_paused(p, false);
			proc_update_reading(p);
		}
	}
}

void proc_manager_registry_hooks(struct proc_manager *pm, struct registry_hooks *hooks)
{
	memset(hooks, 0, sizeof *hooks);
	hooks->ctx = pm;
	hooks->paused = on_sandbox_paused;
	hooks->resumed = on_sandbox_resumed;
	hooks->removing = on_sandbox_removing;
}

/* --- the manager ----------------------------------------------------------- */

struct proc_manager *proc_manager_new(struct event_base *base)
{
	struct proc_manager *pm = calloc(1, sizeof *pm);
	if (!pm)
		return NULL;
	pm->base = base;
	struct passwd *pw = getpwuid(geteuid());
	char uid_text[24];
	snprintf(uid_text, sizeof uid_text, "%u", (unsigned)geteuid());
	pm->user_name = strdup(pw && pw->pw_name ? pw->pw_name : uid_text);
	const char *path = getenv("PATH");
	pm->path_env = strdup(path && *path ? path : DEFAULT_PATH);
	pm->scratch = evbuffer_new();
	pm->sigchld = evsignal_new(base, SIGCHLD, on_sigchld, pm);
	if (!pm->user_name || !pm->path_env || !pm->scratch || !pm->sigchld ||
	    event_add(pm->sigchld, NULL) != 0) {
		proc_manager_free(pm);
		return NULL;
	}
	return pm;
}

void proc_manager_free(struct proc_manager *pm)
{
	if (!pm)
		return;
	for (struct proc *p = pm->head; p; p = p->next)
		if (!p->ended)
			proc_kill_group(p, SIGKILL);
	for (struct proc *p = pm->head; p; p = p->next) {
		if (p->reaped)
			continue;
		while (waitpid(p->pid, &p->wait_status, 0) < 0 && errno == EINTR)
			;
		p->reaped = true;
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	while (pm->head)
		proc_free(pm->head);
	if (pm->sigchld)
		event_free(pm->sigchld);
	if (pm->scratch)
		evbuffer_free(pm->scratch);
	free(pm->user_name);
	free(pm->path_env);
	free(pm);
}
