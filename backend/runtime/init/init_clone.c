/* A command's child in the init's memory (init_clone.h). */
#define _GNU_SOURCE
#include "init_clone.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* One mapping per child that has not left yet: its stack, and above it,
 * at the top, this. Few of its pages are ever touched. */
#define AREA_SIZE (64 * 1024)
struct init_clone {
	/* 1 from before the clone until the kernel clears it: the child
	 * has executed or ended. */
	pid_t running;
	char *blob;
	size_t blob_size;
	struct init_child_args args;
};
#define AREA_TOP ((sizeof(struct init_clone) + 63) & ~(size_t)63)

/* One released area kept for the next command: its pages stay touched. */
static struct init_clone *spare;

static char *area_base(struct init_clone *c)
{
	return (char *)c - (AREA_SIZE - AREA_TOP);
}

static struct init_clone *area_new(void)
{
	if (spare) {
		struct init_clone *c = spare;
		spare = NULL;
		return c;
	}
	char *base =
		mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	return base == MAP_FAILED ? NULL : (struct init_clone *)(void *)(base + AREA_SIZE - AREA_TOP);
}

/* The command as the backend wrote it, read in place in the mapped blob
 * (mapped until the child has left). */
static int read_command(int blob, struct init_clone *c)
{
	struct stat st;
	if (fstat(blob, &st) != 0)
		return -1;
	errno = EINVAL;
	if (st.st_size < (off_t)sizeof(struct init_spawn_blob) || st.st_size > (off_t)INIT_SPAWN_BLOB_MAX)
		return -1;
	size_t size = (size_t)st.st_size;
	char *base = mmap(NULL, size, PROT_READ, MAP_PRIVATE, blob, 0);
	if (base == MAP_FAILED)
		return -1;
	if (init_command_parse(base, size, &c->args.cmd) != 0) {
		int e = errno;
		munmap(base, size);
		errno = e;
		return -1;
	}
	c->blob = base;
	c->blob_size = size;
	return 0;
}

pid_t init_clone_start(struct init_clone **out, int blob, const struct init_child_args *args)
{
	struct init_clone *c = area_new();
	if (!c) {
		errno = ENOMEM;
		return -1;
	}
	c->args = *args;
	c->blob = NULL;
	if (read_command(blob, c) != 0) {
		int e = errno;
		init_clone_release(c);
		errno = e;
		return -1;
	}
	__atomic_store_n(&c->running, 1, __ATOMIC_RELEASE);
	pid_t pid = clone(init_child_main, c, CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, &c->args, NULL, NULL,
		&c->running);
	if (pid < 0) {
		int e = errno;
		__atomic_store_n(&c->running, 0, __ATOMIC_RELEASE);
		init_clone_release(c);
		errno = e;
		return -1;
	}
	*out = c;
	return pid;
}

bool init_clone_running(const struct init_clone *c)
{
	return __atomic_load_n(&c->running, __ATOMIC_ACQUIRE) != 0;
}

void init_clone_release(struct init_clone *c)
{
	init_command_free(&c->args.cmd);
	if (c->blob)
		munmap(c->blob, c->blob_size);
	c->blob = NULL;
	if (!spare)
		spare = c;
	else
		munmap(area_base(c), AREA_SIZE);
}
