/* The runtime's cgroup v2 pieces against the kernel, on a machine whose
 * controllers may all be bound to cgroup v1: the parts of v2 that need no
 * controller. In DIR, a cgroup v2 directory the caller made and removes:
 *   - clone3 with CLONE_INTO_CGROUP (lib/clone3.c), both as a vfork child
 *     on a stack of its own (CLONE_VM: what commands use) and as a copy:
 *     each child starts in the cgroup (its /proc/self/cgroup says so);
 *   - the devices program (runtime_devices.c), loaded and attached: in
 *     the cgroup, null, zero, full and urandom open, /dev/console and
 *     /dev/loop-control fail with EPERM, mknod follows the same list;
 *   - pause (runtime_cgroup_freeze): a busy child stops counting while
 *     frozen, and counts again once thawed; cgroup.events says frozen;
 *   - removal (runtime_cgroup_kill, runtime_cgroup_drain): everything in it
 *     dies of SIGKILL, and the cgroup is gone.
 * Run by tests/node/backend-cgroup2-parts.test.mjs (root).
 *
 *   cgroup2-check DIR     prints "ok" and exits 0, or names each failure */
#define _GNU_SOURCE
#include "check_program.h"
#include "lib/child_stack.h"
#include "lib/clone3.h"
#include "lib/err.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_cgroup_v2.h"
#include "runtime/runtime_control.h"
#include "runtime/runtime_devices.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK (128 * 1024)

static volatile unsigned long *counter;
static int report[2];

/* A copy in the cgroup: counts until it is killed. */
static int count_forever(void *arg)
{
	(void)arg;
	for (;;)
		(*counter)++;
	return 0;
}

/* A vfork child on its own stack: prints its cgroup through cat. */
static int exec_cat(void *arg)
{
	(void)arg;
	dup2(report[1], 1);
	char *argv[] = {"cat", "/proc/self/cgroup", NULL};
	execv("/bin/cat", argv);
	_exit(127);
}

/* A copy in the cgroup: the errno of each device access, as "name=errno". */
static int try_devices(void *arg)
{
	const char *tmp = arg;
	static const char *const nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom",
		"/dev/console", "/dev/loop-control"};
	char line[512] = "";
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		int fd = open(nodes[i], O_RDONLY | O_NOCTTY | O_CLOEXEC);
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s=%d ", nodes[i] + 5,
			fd >= 0 ? 0 : errno);
		if (fd >= 0)
			close(fd);
	}
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/null", tmp);
	int a = mknod(path, S_IFCHR | 0600, makedev(1, 3)) == 0 ? 0 : errno;
	snprintf(path, sizeof path, "%s/console", tmp);
	int b = mknod(path, S_IFCHR | 0600, makedev(5, 1)) == 0 ? 0 : errno;
	snprintf(line + strlen(line), sizeof line - strlen(line), "mknod-null=%d mknod-console=%d", a, b);
	_exit(write(report[1], line, strlen(line)) > 0 ? 0 : 1);
}

static char *read_pipe(void)
{
	static char buf[1024];
	close(report[1]);
	ssize_t got = 0, n;
	while ((n = read(report[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
		got += n;
	buf[got > 0 ? got : 0] = '\0';
	close(report[0]);
	return buf;
}

static int reaped(pid_t pid)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static unsigned long sample_after(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
	nanosleep(&ts, NULL);
	return *counter;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: cgroup2-check DIR\n");
		return 2;
	}
	const char *base = argv[1];
	char dir[PATH_MAX], rel[PATH_MAX + 8];
	snprintf(dir, sizeof dir, "%s/sandbox", base);
	CHECK(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
	runtime_self()->cgroups.version = RT_CGROUP_V2;
	runtime_self()->cgroups.devices_prog = -1;
	struct runtime_cgroup cg;
	runtime_cgroup_none(&cg);
	cg.dir[0] = strdup(dir);
	cg.dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cg.dir_fd >= 0, "open %s: %s", dir, strerror(errno));

	/* The devices program, attached as a sandbox's is. */
	struct err why;
	err_clear(&why);
	int prog = runtime_devices_load(&why);
	CHECK(prog >= 0, "%s", why.msg);
	CHECK(prog < 0 || runtime_devices_attach(prog, cg.dir_fd) == 0, "attach: %s", strerror(errno));

	/* A vfork child on a stack of its own, cloned into the cgroup. */
	char *stack = NULL, *top = child_stack_top(&stack, STACK);
	CHECK(pipe2(report, O_CLOEXEC) == 0, "pipe");
	struct clone3_args a = {.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.stack = (uint64_t)(uintptr_t)(top - STACK),
		.stack_size = STACK,
		.cgroup = (uint64_t)cg.dir_fd};
	pid_t cat = clone3_start(&a, exec_cat, NULL);
	CHECK(cat > 0, "clone3 (CLONE_VM): %s", strerror(errno));
	char *said = read_pipe();
	if (cat > 0)
		reaped(cat);
	/* Its path as the hierarchy names it: the last components of dir. */
	const char *mine = strstr(dir, "/e2b-cgroup2-check");
	snprintf(rel, sizeof rel, "0::%s\n", mine ? mine : dir);
	/* (v1 hierarchies, where there are, come first) */
	const char *v2line = strncmp(said, "0::", 3) == 0 ? said : strstr(said, "\n0::");
	v2line = v2line && v2line != said ? v2line + 1 : v2line;
	CHECK(v2line && strcmp(v2line, rel) == 0, "the vfork child's cgroup: %s (want %s)", said, rel);

	/* Device nodes from inside. */
	char tmp[] = "/tmp/cgroup2-check.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL, "mkdtemp");
	CHECK(pipe2(report, O_CLOEXEC) == 0, "pipe");
	struct clone3_args f = {.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cg.dir_fd};
	pid_t dev = clone3_start(&f, try_devices, tmp);
	CHECK(dev > 0, "clone3 (a copy): %s", strerror(errno));
	said = read_pipe();
	if (dev > 0)
		reaped(dev);
	char want[256];
	snprintf(want, sizeof want,
		"null=0 zero=0 full=0 urandom=0 console=%d loop-control=%d "
		"mknod-null=0 mknod-console=%d",
		EPERM, EPERM, EPERM);
	CHECK(strcmp(said, want) == 0, "devices: %s (want %s)", said, want);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/null", tmp);
	unlink(path);
	rmdir(tmp);

	/* Pause and resume. */
	counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(counter != MAP_FAILED, "mmap");
	pid_t busy = clone3_start(&f, count_forever, NULL);
	CHECK(busy > 0, "clone3: %s", strerror(errno));
	unsigned long before = sample_after(50);
	CHECK(sample_after(50) > before, "the busy child counts");
	CHECK(runtime_cgroup_freeze(&cg, true) == 0, "freeze: %s", strerror(errno));
	char events[128] = "";
	CHECK(runtime_read_at(dir, "cgroup.events", events, sizeof events) == 0 && strstr(events, "frozen 1"),
		"cgroup.events: %s", events);
	unsigned long frozen = sample_after(20);
	CHECK(sample_after(200) == frozen, "frozen, it counts no more");
	CHECK(runtime_cgroup_freeze(&cg, false) == 0, "thaw: %s", strerror(errno));
	unsigned long thawed = *counter;
	CHECK(sample_after(100) > thawed, "thawed, it counts again");
	/* Frozen again, then removed: SIGKILL reaches a frozen task on v2. */
	CHECK(runtime_cgroup_freeze(&cg, true) == 0, "freeze again: %s", strerror(errno));
	runtime_cgroup_kill(&cg);
	int st = busy > 0 ? reaped(busy) : 0;
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "killed by SIGKILL (status %#x)", st);
	CHECK(runtime_cgroup_v2_wait(dir, "populated", 0, 5000) == 0, "empty: %s", strerror(errno));
	runtime_cgroup_close(&cg);
	runtime_cgroup_drain(&cg);
	CHECK(access(dir, F_OK) != 0 && errno == ENOENT, "the cgroup is gone");
	runtime_cgroup_free(&cg);
	if (failures == 0)
		printf("ok\n");
	return failures ? 1 : 0;
}
