/* The process table: registration, output reading with backpressure,
 * reaping (SIGCHLD), the end of a process and its 30 s retention, and the
 * sandbox lifecycle hooks (process_manager.h). */
#include "envd/process/process_manager.h"

#include "envd/process/process_checkpoint.h"
#include "envd/process/process_input.h"
#include "envd/process/process_log.h"
#include "envd/process/process_spawn.h"
#include "envd/process/process_status.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_spawn.h"

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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

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

struct proc *process_find(struct proc_manager *pm, const struct sandbox *sb, uint32_t pid, const char *tag,
	bool ended)
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

static void proc_free(struct proc *p)
{
	unlink_proc(p);
	p->pm->streams->detach_all(p);
	for (int i = 0; i < 2; i++)
		close_output(&p->out[i]);
	process_input_free(p);
	process_timer_free(&p->lifetime);
	if (p->retention)
		event_free(p->retention);
	cJSON_Delete(p->config);
	free(p->tag);
	free(p->end_json);
	process_log_free(p);
	if (p->pidfd >= 0)
		close(p->pidfd);
	free(p);
}

void process_update_reading(struct proc *p)
{
	/* Output nobody takes is not read (the process waits on a full pipe),
	 * so a sandbox writing without end costs the backend nothing; once the
	 * process has ended the rest is read and dropped, to see the end. An
	 * observer in the backend (process_run.h) and the sandbox's log
	 * (process_log.h) take it as a stream does. */
	bool want = !p->paused && p->blocked == 0 && (p->streams || p->observer || p->log_lines || p->reaped);
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

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2) /* Linux 6.9 (linux/pidfd.h) */
#endif

void process_kill_group(struct proc *p, int sig)
{
	if (p->ended)
		return;
	/* The group outlives its leader while a member holds it; the leader
	 * cannot leave it (it leads its own session). Once the leader has been
	 * reaped its number is free, and a process of another sandbox, or of
	 * the host, may lead a group of that number: the group is signalled
	 * through the leader's pidfd, which names this group whatever the
	 * number means now. A kernel without that (before 6.9) gets the
	 * number only while the unreaped leader still holds it. */
	if (p->pidfd >= 0 &&
		syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP) == 0)
		return;
	if (p->reaped)
		return;
	/* Its init, which reaps it, knows whether the number is still its own. */
	if (p->init_child) {
		if (p->sb)
			runtime_spawn_signal(p->sb, p->ns_pid, sig);
		return;
	}
	if (kill(-p->pid, sig) != 0)
		kill(p->pid, sig);
}

/* --- the end of a process ----------------------------------------------- */

static void on_retention_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	proc_free(arg);
}

/* EndEvent as protobuf-JSON, defaults omitted (docs/e2b-protocol-notes.md, "Process service"). */
static char *end_event_json(int status)
{
	char text[96];
	process_status_text(status, text, sizeof text);
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

/* What an ended process keeps for Connect's replay. */
static size_t retained_bytes(const struct proc *p)
{
	return sizeof *p + (p->tag ? strlen(p->tag) : 0) + (p->end_json ? strlen(p->end_json) : 0);
}

/* At most PROC_RETAINED_MAX ended processes of a sandbox, holding at most
 * PROC_RETAINED_BYTES_MAX: the oldest go first, as their retention would
 * end first (a Connect to one then finds no process, as after 30 s). */
static void trim_retained(struct proc_manager *pm, const struct sandbox *sb)
{
	size_t count = 0, bytes = 0;
	for (struct proc *q = pm->head; q; q = q->next) {
		if (q->ended && q->sb == sb) {
			count++;
			bytes += retained_bytes(q);
		}
	}
	for (struct proc *q = pm->head, *next;
		q && (count > PROC_RETAINED_MAX || bytes > PROC_RETAINED_BYTES_MAX); q = next) {
		next = q->next;
		if (!q->ended || q->sb != sb)
			continue;
		count--;
		bytes -= retained_bytes(q);
		proc_free(q);
	}
}

static void proc_finish(struct proc *p)
{
	p->end_json = end_event_json(p->wait_status);
	p->ended = true;
	process_log_end(p);
	/* Nothing is signalled after the end; retention keeps no descriptor. */
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
	/* List shows running processes only: the Start config (its args may
	 * be near 1 MiB) has no use after the end. */
	cJSON_Delete(p->config);
	p->config = NULL;
	process_timer_stop(&p->lifetime);
	process_input_end(p);
	p->pm->streams->finish_all(p);
	if (p->observer) {
		const struct process_observer *obs = p->observer;
		p->observer = NULL;
		obs->ended(p->observer_ctx, p->wait_status);
	}
	if (!p->sb) {
		proc_free(p);
		return;
	}
	p->retention = evtimer_new(p->pm->base, on_retention_over, p);
	if (!p->retention) {
		proc_free(p);
		return;
	}
	process_timer_add_event(p->retention, PROC_RETENTION_MS);
	trim_retained(p->pm, p->sb);
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
		p->pm->streams->data(p, o->kind, p->pm->read_buf, (size_t)n);
		if (p->observer)
			p->observer->output(p->observer_ctx, o->kind, p->pm->read_buf, (size_t)n);
		process_log_output(p, o->kind, p->pm->read_buf, (size_t)n);
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
				process_update_reading(p);
				maybe_finish(p);
				break;
			}
		}
	}
}

/* A command of an isolated sandbox ended: its init reaped it. */
static void on_init_child_exit(void *ctx, struct sandbox *sb, pid_t ns_pid, int status)
{
	struct proc_manager *pm = ctx;
	for (struct proc *p = pm->head; p; p = p->next) {
		if (p->sb == sb && p->init_child && p->ns_pid == ns_pid && !p->reaped) {
			p->reaped = true;
			p->wait_status = status;
			process_update_reading(p);
			maybe_finish(p);
			return;
		}
	}
}

static void on_lifetime_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct proc *p = arg;
	p->lifetime.armed = false;
	process_kill_group(p, SIGKILL);
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

struct proc *process_register(struct proc_manager *pm, struct sandbox *sb, const struct proc_spawned *sp,
	bool is_pty, cJSON *config, char *tag, int64_t lifetime_ms)
{
	pid_t pid = sp->pid;
	int out_fd = sp->out_fd, err_fd = sp->err_fd, in_fd = sp->in_fd;
	struct proc *p = calloc(1, sizeof *p);
	if (p) {
		p->pm = pm;
		p->sb = sb;
		p->pid = pid;
		p->ns_pid = sp->ns_pid;
		p->init_child = sp->init_child;
		/* Not reaped yet: the loop reaps (or its init, which says so), and
		 * it is here. */
		p->pidfd = sp->pidfd >= 0 ? sp->pidfd
			: p->init_child   ? -1
					  : (int)syscall(SYS_pidfd_open, pid, 0);
		p->is_pty = is_pty;
		p->config = config;
		p->tag = tag;
		p->in_fd = in_fd;
		p->out[0].fd = p->out[1].fd = -1;
	}
	if (!p || setup_output(p, 0, is_pty ? PROC_OUT_PTY : PROC_OUT_STDOUT, out_fd) != 0 ||
		setup_output(p, 1, PROC_OUT_STDERR, err_fd) != 0 || process_input_init(p) != 0 ||
		process_timer_init(&p->lifetime, pm->base, on_lifetime_over, p) != 0) {
		if (sp->init_child) {
			if (sp->pidfd >= 0)
				syscall(SYS_pidfd_send_signal, sp->pidfd, SIGKILL, NULL, 0);
			runtime_spawn_signal(sb, sp->ns_pid, SIGKILL);
			if (p)
				p->pidfd = -1;
			if (sp->pidfd >= 0)
				close(sp->pidfd);
		} else {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
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
		process_timer_start(&p->lifetime, lifetime_ms);
	process_update_reading(p);
	return p;
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
			process_kill_group(p, SIGSTOP); /* with isolation the freezer holds it */
		process_update_reading(p);
		process_timer_suspend(&p->lifetime);
		p->pm->streams->set_paused(p, true);
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
			process_kill_group(p, SIGCONT);
		process_timer_resume(&p->lifetime);
		p->pm->streams->set_paused(p, false);
		process_update_reading(p);
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
		process_kill_group(p, SIGKILL);
		p->sb = NULL;
		/* Its init dies with the sandbox: nobody reports this end. */
		if (p->init_child && !p->reaped) {
			p->reaped = true;
			p->wait_status = SIGKILL;
		}
		if (runtime_isolated())
			p->pm->streams->cut_all(p);
		if (p->paused) {
			p->paused = false;
			process_timer_resume(&p->lifetime);
			p->pm->streams->set_paused(p, false);
		}
		process_update_reading(p);
		maybe_finish(p); /* frees it, if its pipes are closed already */
	}
}

static void on_sandbox_checkpoint(void *ctx, struct sandbox *sb, enum registry_checkpoint_step step)
{
	if (step == REGISTRY_CKPT_STOPPED)
		on_sandbox_removing(ctx, sb); /* its processes have ended */
	else
		process_checkpoint(ctx, sb, step);
}

void process_manager_registry_hooks(struct proc_manager *pm, struct registry_hooks *hooks)
{
	memset(hooks, 0, sizeof *hooks);
	hooks->ctx = pm;
	hooks->paused = on_sandbox_paused;
	hooks->resumed = on_sandbox_resumed;
	hooks->removing = on_sandbox_removing;
	hooks->checkpoint = on_sandbox_checkpoint;
}

/* --- the manager ----------------------------------------------------------- */

struct proc_manager *process_manager_new(struct event_base *base, const struct process_stream_ops *streams)
{
	struct proc_manager *pm = calloc(1, sizeof *pm);
	if (!pm)
		return NULL;
	pm->base = base;
	pm->streams = streams;
	struct passwd *pw = getpwuid(geteuid());
	char uid_text[24];
	snprintf(uid_text, sizeof uid_text, "%u", (unsigned)geteuid());
	pm->user_name = strdup(pw && pw->pw_name ? pw->pw_name : uid_text);
	const char *path = getenv("PATH");
	pm->path_env = strdup(path && *path ? path : DEFAULT_PATH);
	pm->scratch = evbuffer_new();
	pm->sigchld = evsignal_new(base, SIGCHLD, on_sigchld, pm);
	runtime_spawn_on_exit(on_init_child_exit, pm);
	if (!pm->user_name || !pm->path_env || !pm->scratch || !pm->sigchld ||
		event_add(pm->sigchld, NULL) != 0) {
		process_manager_free(pm);
		return NULL;
	}
	return pm;
}

void process_manager_reap(struct proc_manager *pm)
{
	if (!pm)
		return;
	for (struct proc *p = pm->head; p; p = p->next)
		if (!p->ended)
			process_kill_group(p, SIGKILL);
	for (struct proc *p = pm->head; p; p = p->next) {
		if (p->reaped || p->init_child)
			continue;
		while (waitpid(p->pid, &p->wait_status, 0) < 0 && errno == EINTR)
			;
		p->reaped = true;
	}
}

void process_manager_free(struct proc_manager *pm)
{
	if (!pm)
		return;
	process_manager_reap(pm);
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
