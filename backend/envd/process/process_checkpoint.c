/* Commands' descriptors across a checkpoint (process_checkpoint.h). */
#include "envd/process/process_checkpoint.h"

#include "envd/process/process_table.h"
#include "runtime/runtime_spawn.h"

#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A parked descriptor's key: the command's pid in the sandbox and which. */
enum {
	PARK_OUT,
	PARK_ERR,
	PARK_IN
};
#define PARK_KEY(ns_pid, which) (((uint64_t)(uint32_t)(ns_pid) << 2) | (uint64_t)(which))

static bool parked_here(const struct proc *p, const struct sandbox *sb)
{
	return p->sb == sb && !p->ended && p->init_child;
}

static void park(struct proc_manager *pm, struct sandbox *sb)
{
	size_t n = 0, cap = 0;
	for (struct proc *p = pm->head; p; p = p->next)
		if (parked_here(p, sb))
			cap += 3;
	if (cap == 0)
		return;
	uint64_t *keys = calloc(cap, sizeof *keys);
	int *fds = calloc(cap, sizeof *fds);
	for (struct proc *p = pm->head; keys && fds && p; p = p->next) {
		if (!parked_here(p, sb))
			continue;
		for (int i = 0; i < 2; i++)
			if (p->out[i].fd >= 0) {
				keys[n] = PARK_KEY(p->ns_pid, i == 0 ? PARK_OUT : PARK_ERR);
				fds[n++] = p->out[i].fd;
			}
		if (p->in_fd >= 0) {
			keys[n] = PARK_KEY(p->ns_pid, PARK_IN);
			fds[n++] = p->in_fd;
		}
	}
	/* A failure leaves descriptors outside the tree: the dump refuses it,
	 * and the sandbox is frozen instead. */
	if (!keys || !fds || runtime_spawn_park(sb, keys, fds, n) != 0)
		fprintf(stderr, "sandbox %s: cannot hand its commands' descriptors to its init\n", sb->id);
	free(keys);
	free(fds);
}

/* ev, watching fd now, with the same callback; the old one freed. */
static struct event *rewatch(struct event_base *base, struct event *ev, int fd)
{
	if (!ev)
		return NULL;
	event_callback_fn fn = event_get_callback(ev);
	void *arg = event_get_callback_arg(ev);
	short what = event_get_events(ev);
	event_free(ev);
	return event_new(base, fd, what, fn, arg);
}

struct taking {
	struct proc_manager *pm;
	struct sandbox *sb;
};

static void take_back(void *ctx, uint64_t key, int fd)
{
	struct taking *t = ctx;
	pid_t ns_pid = (pid_t)(key >> 2);
	int which = (int)(key & 3);
	struct proc *p = t->pm->head;
	while (p && !(parked_here(p, t->sb) && p->ns_pid == ns_pid))
		p = p->next;
	if (!p || which > PARK_IN) {
		close(fd); /* a command of an earlier run of the backend */
		return;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (which == PARK_IN) {
		if (p->in_fd >= 0)
			close(p->in_fd);
		p->in_fd = fd;
		p->in_ev = rewatch(t->pm->base, p->in_ev, fd);
		return;
	}
	struct proc_output *o = &p->out[which == PARK_OUT ? 0 : 1];
	if (o->fd < 0) {
		close(fd);
		return;
	}
	close(o->fd);
	o->fd = fd;
	o->ev = rewatch(t->pm->base, o->ev, fd);
	o->reading = false; /* the resumed hook watches it again */
}

void process_checkpoint(struct proc_manager *pm, struct sandbox *sb, enum registry_checkpoint_step step)
{
	if (step == REGISTRY_CKPT_BEFORE) {
		park(pm, sb);
	} else if (step == REGISTRY_CKPT_FAILED) {
		runtime_spawn_drop(sb);
	} else if (step == REGISTRY_CKPT_RESTORED) {
		/* The old processes' pidfds name processes that have ended. */
		for (struct proc *p = pm->head; p; p = p->next) {
			if (parked_here(p, sb) && p->pidfd >= 0) {
				close(p->pidfd);
				p->pidfd = -1;
			}
		}
		struct taking t = {pm, sb};
		if (runtime_spawn_unpark(sb, take_back, &t) != 0)
			fprintf(stderr, "sandbox %s: cannot take its commands' descriptors back\n", sb->id);
	}
}
