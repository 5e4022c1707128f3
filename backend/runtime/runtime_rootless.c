/* Rootless isolation (runtime_rootless.h): the backend's own user, mount
 * and pid namespaces, entered once at start. */
#define _GNU_SOURCE
#include "runtime/runtime_rootless.h"

#include "lib/err.h"
#include "runtime/runtime_cgroup_enter.h"
#include "runtime/runtime_control.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static struct runtime_rootless rl = {.host_proc_fd = -1};

const struct runtime_rootless *runtime_rootless_state(void)
{
	return &rl;
}

/* The first "<user or uid>:<start>:<count>" line of an /etc/sub[ug]id file
 * (both name the user, by name or uid). */
static bool find_subids(const char *file, const char *user, unsigned id, unsigned long *start,
	unsigned long *count)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return false;
	char line[512], num[16];
	snprintf(num, sizeof num, "%u", id);
	bool found = false;
	while (!found && fgets(line, sizeof line, f)) {
		char *first = strchr(line, ':');
		if (!first || line[0] == '#')
			continue;
		*first = '\0';
		if (strcmp(line, user) != 0 && strcmp(line, num) != 0)
			continue;
		char *end;
		*start = strtoul(first + 1, &end, 10);
		if (*end == ':') {
			*count = strtoul(end + 1, &end, 10);
			found = *count > 0;
		}
	}
	fclose(f);
	return found;
}

static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dirs[4096], file[4200];
	snprintf(dirs, sizeof dirs, "%s:/usr/bin:/bin", path ? path : "");
	for (char *dir = strtok(dirs, ":"); dir; dir = strtok(NULL, ":")) {
		snprintf(file, sizeof file, "%s/%s", dir, prog);
		if (access(file, X_OK) == 0)
			return true;
	}
	return false;
}

/* newuidmap/newgidmap <pid> 0 <own id> 1 1 <start> <count>: exit status. */
static int run_map_tool(const char *tool, pid_t pid, unsigned own, unsigned long start, unsigned long count)
{
	char a[5][24];
	snprintf(a[4], sizeof a[4], "%s", tool);
	snprintf(a[0], sizeof a[0], "%d", (int)pid);
	snprintf(a[1], sizeof a[1], "%u", own);
	snprintf(a[2], sizeof a[2], "%lu", start);
	snprintf(a[3], sizeof a[3], "%lu", count);
	char zero[] = "0", one[] = "1";
	char *argv[] = {a[4], a[0], zero, a[1], one, one, a[2], a[3], NULL};
	pid_t c = fork();
	if (c == 0) {
		execvp(tool, argv);
		_exit(127);
	}
	int st = 0;
	if (c < 0 || waitpid(c, &st, 0) != c)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A user namespace where this process is root: over the subordinate ids
 * when the user has them (a helper runs the setuid map tools on us), else
 * over the user's own id alone. */
static int enter_userns(struct err *err)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	struct passwd *pw = getpwuid(uid);
	snprintf(rl.user, sizeof rl.user, "%s", pw ? pw->pw_name : "?");
	unsigned long us = 0, uc = 0, gs = 0, gc = 0;
	bool sub = find_subids("/etc/subuid", rl.user, uid, &us, &uc) &&
		find_subids("/etc/subgid", rl.user, uid, &gs, &gc) && on_path("newuidmap") &&
		on_path("newgidmap");
	int go[2] = {-1, -1}, done[2] = {-1, -1};
	pid_t helper = -1, self = getpid();
	if (sub && (pipe2(go, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0))
		return err_set(err, errno, "cannot make a pipe");
	if (sub && (helper = fork()) == 0) {
		char c = 0;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		c = run_map_tool("newuidmap", self, uid, us, uc) == 0 &&
				run_map_tool("newgidmap", self, gid, gs, gc) == 0
			? 'y'
			: 'n';
		_exit(write(done[1], &c, 1) == 1 ? 0 : 1);
	}
	if (sub) {
		close(go[0]);
		close(done[1]);
	}
	if (unshare(CLONE_NEWUSER) != 0) {
		err_set(err, errno,
			"cannot create a user namespace (%s); check that user "
			"namespaces are enabled (sysctl user.max_user_namespaces)",
			strerror(errno));
		if (sub) {
			close(go[1]);
			close(done[0]);
			waitpid(helper, NULL, 0);
		}
		return -1;
	}
	char c = 'n';
	if (sub) {
		if (write(go[1], "g", 1) != 1 || read(done[0], &c, 1) != 1)
			c = 'n';
		close(go[1]);
		close(done[0]);
		waitpid(helper, NULL, 0);
		if (c != 'y')
			return err_set(err, 0,
				"newuidmap/newgidmap could not map the subordinate ids "
				"of %s (/etc/subuid, /etc/subgid)",
				rl.user);
		rl.ids_base = 1;
		rl.ids_count = uc < gc ? uc : gc;
	} else {
		char map[64];
		snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
		if (runtime_write_at("/proc/self", "setgroups", "deny") != 0 ||
			runtime_write_at("/proc/self", "uid_map", map) != 0)
			return err_set(err, errno, "cannot write this process's uid_map");
		snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
		if (runtime_write_at("/proc/self", "gid_map", map) != 0)
			return err_set(err, errno, "cannot write this process's gid_map");
		rl.single_id = true;
		rl.ids_base = 0;
		rl.ids_count = 1;
	}
	if (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0 || (sub && setgroups(0, NULL) != 0))
		return err_set(err, errno, "cannot become root in the new user namespace");
	return 0;
}

/* The started process, outside: passes signals on and ends as the backend
 * ended. */
__attribute__((noreturn)) static void forward(pid_t child, const sigset_t *set)
{
	for (;;) {
		int sig = sigwaitinfo(set, NULL);
		if (sig != SIGCHLD) {
			if (sig > 0)
				kill(child, sig);
			continue;
		}
		int st;
		if (waitpid(child, &st, WNOHANG) != child)
			continue;
		if (WIFEXITED(st))
			_exit(WEXITSTATUS(st));
		sig = WTERMSIG(st);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		_exit(128 + sig);
	}
}

static int enter_pid_and_mount_ns(struct err *err)
{
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return err_set(err, errno, "cannot make a private mount namespace");
	/* Back into our own pid namespace after forking into a sandbox's needs
	 * CAP_SYS_ADMIN over its owner: so the backend runs in one it owns. */
	if (unshare(CLONE_NEWPID) != 0)
		return err_set(err, errno, "cannot make a pid namespace");
	sigset_t set, old;
	sigemptyset(&set);
	static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD};
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	int alive[2];
	if (pipe2(alive, O_CLOEXEC) != 0)
		return err_set(err, errno, "cannot make a pipe");
	pid_t child = fork();
	if (child < 0)
		return err_set(err, errno, "cannot fork");
	if (child > 0) {
		close(alive[0]);
		forward(child, &set); /* keeps alive[1] open until it ends */
	}
	close(alive[1]);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd p = {.fd = alive[0], .events = POLLIN};
	if (poll(&p, 1, 0) != 0)
		_exit(1); /* the forwarder is gone already */
	close(alive[0]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* /proc still shows the machine's pids: our pid there, then our own /proc. */
	char self[32] = "";
	if (readlink("/proc/self", self, sizeof self - 1) <= 0)
		return err_set(err, errno, "cannot read /proc/self");
	rl.host_pid = (pid_t)atoi(self);
	rl.host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		return err_set(err, errno, "cannot mount /proc for the backend's pid namespace");
	return 0;
}

int runtime_rootless_prepare(enum isolation *mode)
{
	bool root = geteuid() == 0;
	if (*mode == ISOLATION_NONE || (*mode != ISOLATION_ROOTLESS && root))
		return 0; /* auto as root: full, checked by runtime_init */
	if (*mode == ISOLATION_FULL) {
		fprintf(stderr,
			"e2b-local-backend: --isolation full needs root (this backend runs as "
			"uid %u); --isolation rootless (or auto) isolates without it\n",
			(unsigned)geteuid());
		return -1;
	}
	if (root) {
		fprintf(stderr,
			"e2b-local-backend: --isolation rootless is for a backend started by a "
			"user other than root; as root, --isolation full (or auto) applies\n");
		return -1;
	}
	/* A leaf of its own in a cgroup v2 subtree delegated to the user, before
	 * the fork below: the process that stays outside must leave that
	 * cgroup too. Without one, sandboxes go without cgroups
	 * (runtime_init says so). */
	runtime_cgroup_enter(false, NULL);
	struct err why;
	if (enter_userns(&why) != 0 || enter_pid_and_mount_ns(&why) != 0) {
		fprintf(stderr, "e2b-local-backend: %s: rootless isolation is not possible here: %s\n",
			*mode == ISOLATION_AUTO ? "isolation auto" : "--isolation rootless", why.msg);
		return -1;
	}
	rl.entered = true;
	if (rl.single_id)
		fprintf(stderr,
			"e2b-local-backend: rootless with a single id: %s has no subordinate "
			"ids in /etc/subuid and /etc/subgid (or no newuidmap/newgidmap, Debian package "
			"uidmap), so every account of a sandbox runs as %s's own id\n",
			rl.user, rl.user);
	*mode = ISOLATION_ROOTLESS;
	return 0;
}
