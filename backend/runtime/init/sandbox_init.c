/* e2b-sandbox-init: pid 1 of one sandbox. The backend clones it into new
 * user, pid, mount, uts, ipc and network namespaces (already in the
 * sandbox's cgroups, root of its user namespace) with the sandbox's overlay
 * mounted at argv[1]. It makes that directory the root of its mount
 * namespace (with its own /proc, /dev/pts, /dev/shm, on mount points it
 * makes where the image has none), sets the hostname,
 * brings loopback up, installs the sandbox's syscall policy (a BPF program
 * on fd 4), reports "ok" (or an error text) on fd 3, and then serves the
 * backend on fds 5 and 6 (init_serve.h). Before the policy it executes
 * itself again from a read-only bind mount of its binary inside the
 * sandbox (INIT_SELF_PATH), so that the file it runs from is in the
 * sandbox's mounts, where a checkpoint finds it: it starts every command of the
 * sandbox, so that they are all its descendants (one process tree, which a
 * checkpoint dumps whole), reports their ends, and reaps orphans. Killing
 * this process makes the kernel kill every process of the sandbox.
 *
 * Built static and small: its memory counts against every idle sandbox. */
#define _GNU_SOURCE
#include "init_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int report_fd = 3;

/* Where the init's binary is bound inside the sandbox (on the /dev/shm
 * tmpfs it mounts itself: nothing is written to the sandbox's disk). The
 * backend names this mount as external to a checkpoint
 * (runtime_checkpoint.c). */
#define INIT_SELF_PATH "/dev/shm/.e2b-sandbox-init"
#define INIT_SERVE_ARG "--serve"

/* Ptys of one sandbox (devpts max=): the machine has kernel.pty.max in all
 * (4096 by default, 1024 of them kept for the host's own devpts), and one
 * sandbox must not take them all. */
#define SANDBOX_PTYS_MAX "256"

static void fail(const char *what)
{
	dprintf(report_fd, "%s: %s", what, strerror(errno));
	_exit(1);
}

static void loopback_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail("socket");
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		fail("get lo flags");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		fail("bring lo up");
	close(s);
}

/* Read-only over itself, as container engines do: root in the sandbox must
 * not reboot the machine through sysrq or change kernel settings. */
static void read_only(const char *path)
{
	if (access(path, F_OK) != 0)
		return; /* not in this kernel */
	if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0 ||
		mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
		fail(path);
}

/* The device nodes a sandbox needs. A filesystem mounted in a user
 * namespace other than the machine's (rootless) will not open the ones it
 * holds, and a template built without root has none: then the machine's own
 * are bound over them (before pivot_root, "/dev" is still the host's). */
static void device_nodes(void)
{
	/* A device, not the empty file an earlier sandbox made as a mount
	 * point and a build step sealed into a layer (below). */
	struct stat st;
	int fd = open("dev/null", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	bool own = fd >= 0 && fstat(fd, &st) == 0 && S_ISCHR(st.st_mode);
	if (fd >= 0)
		close(fd);
	if (own)
		return; /* the template's own serve */
	static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		char mine[32], host[32];
		snprintf(mine, sizeof mine, "dev/%s", nodes[i]);
		snprintf(host, sizeof host, "/dev/%s", nodes[i]);
		fd = open(mine, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666); /* a mount point */
		if (fd >= 0)
			close(fd);
		if (mount(host, mine, NULL, MS_BIND, NULL) != 0)
			fail(mine);
	}
	mkdir("dev/pts", 0755);
	fd = open("dev/ptmx", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd >= 0)
		close(fd);
	static const char *const links[][2] = {{"/proc/self/fd", "dev/fd"}, {"/proc/self/fd/0", "dev/stdin"},
		{"/proc/self/fd/1", "dev/stdout"}, {"/proc/self/fd/2", "dev/stderr"}};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		if (symlink(links[i][0], links[i][1]) != 0 && errno != EEXIST)
			fail(links[i][1]);
}

/* The template's /dev/console is the host's console (5:1). The devices
 * cgroup refuses to open it (full isolation) and a rootless overlay opens
 * no node of its own; /dev/null over it also lets programs that write to
 * the console do so harmlessly. */
static void mask_console(void)
{
	struct stat st;
	if (lstat("dev/console", &st) != 0 || !S_ISCHR(st.st_mode))
		return;
	if (mount("dev/null", "dev/console", NULL, MS_BIND, NULL) != 0)
		fail("mask /dev/console");
}

/* The backend's syscall policy (backend/runtime/runtime_seccomp.c), as the
 * kernel takes it; this program needs no libseccomp. Installed as the last
 * step of the setup, which needs mount and pivot_root (both denied). */
static void install_syscall_policy(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		fail("syscall policy on fd 4");
	size_t size = (size_t)st.st_size;
	if (size == 0 || size % sizeof(struct sock_filter) != 0 ||
		size > BPF_MAXINSNS * sizeof(struct sock_filter)) {
		errno = EINVAL;
		fail("syscall policy on fd 4");
	}
	void *insns = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (insns == MAP_FAILED)
		fail("map the syscall policy");
	struct sock_fprog prog = {.len = (unsigned short)(size / sizeof(struct sock_filter)),
		.filter = insns};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		fail("install the syscall policy");
	munmap(insns, size);
	close(fd);
}

/* What /proc, /sys and /dev are mounted on (or hold). An image may lack
 * them (FROM scratch and many minimal images do): they are made as Docker
 * makes them, here in the sandbox's own writable layer (the overlay's
 * upper), never in the image's layers, which other sandboxes share. */
static void mount_points(void)
{
	static const struct {
		const char *path;
		mode_t mode;
	} dirs[] = {{"proc", 0555}, {"sys", 0555}, {"dev", 0755}};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (mkdir(dirs[i].path, dirs[i].mode) != 0 && errno != EEXIST)
			fail(dirs[i].path);
}

/* Its own binary (self: its path in the backend's mounts, which this
 * namespace copied), bound read-only (and nosuid) at INIT_SELF_PATH; the
 * root is still "." here. */
static void bind_self(const char *self)
{
	int fd = open("." INIT_SELF_PATH, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		fail("make the init's mount point");
	close(fd);
	if (mount(self, "." INIT_SELF_PATH, NULL, MS_BIND, NULL) != 0 ||
		mount(NULL, "." INIT_SELF_PATH, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
			NULL) != 0)
		fail("bind the init's binary");
}

/* The second run (from INIT_SELF_PATH): the setup is done; the syscall
 * policy, the report, then serving. */
static int serve(void)
{
	prctl(PR_SET_NAME, "e2b-sandbox-init");
	if (init_serve_prepare() != 0)
		fail("cut the capability bounding set");
	install_syscall_policy(4);
	if (write(report_fd, "ok", 2) != 2)
		return 1;
	close(report_fd);
	int null_fd = open("/dev/null", O_RDWR);
	if (null_fd >= 0) {
		dup2(null_fd, 0);
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		if (null_fd > 2)
			close(null_fd);
	}

	/* Not dumpable: a process of the sandbox running as its root (the same
	 * ids) may not trace it, read its memory or take over its sockets to
	 * the backend; that needs CAP_SYS_PTRACE, which commands do not keep.
	 * Dumpable only while a checkpoint is made (INIT_DUMPABLE). */
	prctl(PR_SET_DUMPABLE, 0);
	init_serve();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], INIT_SERVE_ARG) == 0)
		return serve();
	if (argc < 4) {
		dprintf(report_fd, "usage: e2b-sandbox-init ROOTFS HOSTNAME SELF");
		return 2;
	}
	const char *root = argv[1];
	/* A session of its own: it was cloned in the backend's, which lies
	 * outside the sandbox (a checkpoint needs every session leader of the
	 * tree inside its pid namespace). */
	if (setsid() < 0)
		fail("setsid");
	/* Nothing mounted here may propagate back to the backend's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		fail("make mounts private");
	if (chdir(root) != 0)
		fail("chdir rootfs");
	/* The overlay came from the backend's namespace, so it is locked in
	 * this less privileged one, and pivot_root refuses it. A copy of it made
	 * here is ours: put it on top and move into it. */
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, ".",
		OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		fail("clone the root");
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, ".", MOVE_MOUNT_F_EMPTY_PATH) != 0)
		fail("mount the root");
	if (fchdir(tree) != 0)
		fail("enter the root");
	close(tree);
	mount_points();
	if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
		fail("mount /proc");
	read_only("proc/sys");
	read_only("proc/sysrq-trigger");
	read_only("proc/irq");
	read_only("proc/bus");
	device_nodes();
	mask_console();
	if (access("proc/kcore", F_OK) == 0 && mount("dev/null", "proc/kcore", NULL, MS_BIND, NULL) != 0)
		fail("mask /proc/kcore");
	/* A private devpts, so ptys opened inside the sandbox are its own; with
	 * a single id (rootless without subordinate ids) there is no group tty. */
	if (mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		    "newinstance,ptmxmode=0666,mode=0620,gid=5,max=" SANDBOX_PTYS_MAX) != 0 &&
		(errno != EINVAL ||
			mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
				"newinstance,ptmxmode=0666,mode=0600,max=" SANDBOX_PTYS_MAX) != 0))
		fail("mount /dev/pts");
	if (mount("dev/pts/ptmx", "dev/ptmx", NULL, MS_BIND, NULL) != 0)
		fail("bind /dev/ptmx");
	mkdir("dev/shm", 01777);
	if (mount("shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=65536k") != 0)
		fail("mount /dev/shm");
	bind_self(argv[3]);
	/* pivot_root(".", "."): the old root ends up on top of the new one and
	 * is then detached, so nothing of the host stays reachable. */
	if (syscall(SYS_pivot_root, ".", ".") != 0)
		fail("pivot_root");
	if (umount2(".", MNT_DETACH) != 0)
		fail("detach the host root");
	if (chdir("/") != 0)
		fail("chdir /");
	if (sethostname(argv[2], strlen(argv[2])) != 0)
		fail("sethostname");
	loopback_up();
	char *args[] = {argv[0], INIT_SERVE_ARG, NULL};
	char *envp[] = {NULL};
	execve(INIT_SELF_PATH, args, envp);
	fail("execute " INIT_SELF_PATH);
}
