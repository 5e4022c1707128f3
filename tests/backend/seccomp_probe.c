/* seccomp-probe: makes each call the sandbox's syscall policy must refuse
 * (backend/runtime/runtime_seccomp.c, docs/backend/runtime-and-isolation.md "Syscall
 * policy"), a few it must let through, and two escapes through another
 * syscall ABI, each in a forked child, and prints one JSON line per call:
 *
 *   {"call":"mount","want":"EPERM","errno":2}       errno 0: it succeeded
 *   {"call":"int 0x80 (i386 getpid)","want":"SIGSYS","signal":31}
 *
 * want is what the policy must give: EPERM, ENOSYS (clone3), SIGSYS (the
 * process is killed) or "allowed" (anything but EPERM). The arguments are
 * chosen so that without the policy, even as root with every capability, a
 * call fails some other way (ENOENT, EINVAL, EBADF, EFAULT, ...) or succeeds
 * harmlessly inside the throwaway child: tests/node/backend-seccomp.test.mjs
 * runs it with and without the policy on the host, and inside a sandbox as
 * root and as user. Static, so it runs inside any template. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Newer than the C library's headers (Linux 6.8). */
#ifndef __NR_lsm_get_self_attr
#define __NR_lsm_get_self_attr 459
#define __NR_lsm_set_self_attr 460
#define __NR_lsm_list_modules 461
#endif

#define NOWHERE "/nonexistent-e2b-seccomp-probe"
#define AF_ALG_FAMILY 38
#define AF_VSOCK_FAMILY 40

struct probe {
	const char *call;
	const char *want;
	long nr;
	long a[6];
	long (*fn)(void); /* instead of nr and a */
};
#define CALL(call, want, nr, ...) \
	{ \
		call, want, nr, {__VA_ARGS__}, NULL \
	}
#define FN(call, want, fn) \
	{ \
		call, want, 0, {0}, fn \
	}

/* A real new user namespace: without the policy this succeeds. */
static long clone_newuser(void)
{
	long r = syscall(SYS_clone, (long)(CLONE_NEWUSER | SIGCHLD), 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	return r < 0 ? -1 : 0;
}

static long clone_fork(void)
{
	long r = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	if (r == 0)
		_exit(0);
	return r < 0 ? -1 : 0;
}

static long clock_adjtime_read(void)
{
	struct timex tx = {.modes = 0};
	return syscall(SYS_clock_adjtime, (long)CLOCK_REALTIME, (long)&tx) < 0 ? -1 : 0;
}

#if defined(__x86_64__)
/* getpid through the i386 entry point: a filter written for x86_64 numbers
 * would not apply to it. */
static long int80_getpid(void)
{
	long r = 20; /* __NR_getpid on i386 */
	__asm__ volatile("int $0x80" : "+a"(r) : : "r8", "r9", "r10", "r11", "cc", "memory");
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

/* getpid with the x32 ABI's bit set. */
static long x32_getpid(void)
{
	return syscall(0x40000000L | SYS_getpid);
}
#endif

static void run(const struct probe *p)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		_exit(2);
	}
	if (pid == 0) {
		long r = p->fn ? p->fn()
			       : syscall(p->nr, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]);
		_exit(r == -1 ? (errno & 0xff) : 0);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			perror("waitpid");
			_exit(2);
		}
	if (WIFSIGNALED(status))
		printf("{\"call\":\"%s\",\"want\":\"%s\",\"signal\":%d}\n", p->call, p->want,
			WTERMSIG(status));
	else
		printf("{\"call\":\"%s\",\"want\":\"%s\",\"errno\":%d}\n", p->call, p->want,
			WEXITSTATUS(status));
}

int main(void)
{
	const long no = (long)NOWHERE, bad = 0xffffffffL;
	const struct probe probes[] = {
		/* user namespaces and namespaces in general */
		CALL("unshare(CLONE_NEWUSER)", "EPERM", SYS_unshare, CLONE_NEWUSER),
		FN("clone(CLONE_NEWUSER)", "EPERM", clone_newuser),
		CALL("clone3", "ENOSYS", SYS_clone3, 0, 0),
		CALL("setns", "EPERM", SYS_setns, -1, 0),
		/* keys */
		CALL("keyctl", "EPERM", SYS_keyctl, 9999),
		CALL("add_key", "EPERM", SYS_add_key, 0, 0, 0, 0, 0),
		CALL("request_key", "EPERM", SYS_request_key, 0, 0, 0, 0),
		/* kernel programs, tracing, memory tricks */
		CALL("bpf", "EPERM", SYS_bpf, 9999, 0, 0),
		CALL("perf_event_open", "EPERM", SYS_perf_event_open, 0, 0, -1, -1, 0),
		CALL("userfaultfd", "EPERM", SYS_userfaultfd, UFFD_USER_MODE_ONLY | 0x8),
		CALL("io_uring_setup", "EPERM", SYS_io_uring_setup, 1, 0),
		CALL("io_uring_enter", "EPERM", SYS_io_uring_enter, -1, 0, 0, 0, 0, 0),
		CALL("io_uring_register", "EPERM", SYS_io_uring_register, -1, 0, 0, 0),
		/* the machine: kexec, modules, reboot, swap, accounting, log, clock, quotas */
		CALL("kexec_load", "EPERM", SYS_kexec_load, 0, 0, 0, bad),
		CALL("kexec_file_load", "EPERM", SYS_kexec_file_load, -1, -1, 0, 0, bad),
		CALL("init_module", "EPERM", SYS_init_module, 0, 0, 0),
		CALL("finit_module", "EPERM", SYS_finit_module, -1, 0, 0),
		CALL("delete_module", "EPERM", SYS_delete_module, (long)"e2b_seccomp_probe_none", 0),
		CALL("reboot", "EPERM", SYS_reboot, 0, 0, 0, 0),
		CALL("swapon", "EPERM", SYS_swapon, no, 0),
		CALL("swapoff", "EPERM", SYS_swapoff, no),
		CALL("acct", "EPERM", SYS_acct, no),
		CALL("syslog", "EPERM", SYS_syslog, 10 /* SIZE_BUFFER: a read */, 0, 0),
		CALL("clock_settime", "EPERM", SYS_clock_settime, CLOCK_REALTIME, 0),
		CALL("settimeofday", "EPERM", SYS_settimeofday, 0, 0),
		CALL("quotactl", "EPERM", SYS_quotactl, bad, no, 0, 0),
		CALL("quotactl_fd", "EPERM", SYS_quotactl_fd, -1, 0, 0, 0),
		/* mounts and file handles */
		CALL("mount", "EPERM", SYS_mount, 0, no, 0, 0, 0),
		CALL("umount2", "EPERM", SYS_umount2, no, 0),
		CALL("pivot_root", "EPERM", SYS_pivot_root, no, no),
		CALL("open_by_handle_at", "EPERM", SYS_open_by_handle_at, -1, 0, 0),
		CALL("open_tree", "EPERM", SYS_open_tree, -1, 0, bad),
		CALL("move_mount", "EPERM", SYS_move_mount, -1, 0, -1, 0, bad),
		CALL("fsopen", "EPERM", SYS_fsopen, 0, 0),
		CALL("fsconfig", "EPERM", SYS_fsconfig, -1, 0, 0, 0, 0),
		CALL("fsmount", "EPERM", SYS_fsmount, -1, bad, 0),
		CALL("fspick", "EPERM", SYS_fspick, -1, 0, bad),
		CALL("mount_setattr", "EPERM", SYS_mount_setattr, -1, 0, bad, 0, 0),
		CALL("fanotify_init", "EPERM", SYS_fanotify_init, bad, 0),
		/* names, ports, other processes, NUMA, LSM */
		CALL("sethostname", "EPERM", SYS_sethostname, 0, 9999),
		CALL("setdomainname", "EPERM", SYS_setdomainname, 0, 9999),
		CALL("iopl", "EPERM", SYS_iopl, 4),
		CALL("ioperm", "EPERM", SYS_ioperm, 0x10000, 1, 1),
		CALL("kcmp", "EPERM", SYS_kcmp, 0, 0, 9999, 0, 0),
		CALL("pidfd_getfd", "EPERM", SYS_pidfd_getfd, -1, 0, 0),
		CALL("process_madvise", "EPERM", SYS_process_madvise, -1, 0, 0, 0, 0),
		CALL("set_mempolicy", "EPERM", SYS_set_mempolicy, 0, 0, 0),
		CALL("lsm_list_modules", "EPERM", __NR_lsm_list_modules, 0, 0, 0),
		/* long gone or never there: no way to reach whatever is left of them */
		CALL("uselib", "EPERM", SYS_uselib, 0),
		CALL("nfsservctl", "EPERM", SYS_nfsservctl, 0, 0, 0),
		CALL("lookup_dcookie", "EPERM", SYS_lookup_dcookie, 0, 0, 0),
		CALL("create_module", "EPERM", SYS_create_module, 0, 0),
		CALL("get_kernel_syms", "EPERM", SYS_get_kernel_syms, 0),
		CALL("query_module", "EPERM", SYS_query_module, 0, 0, 0, 0, 0),
		/* personality beyond the values moby allows */
		CALL("personality(ADDR_NO_RANDOMIZE)", "EPERM", SYS_personality, 0x0040000),
		/* socket families moby refuses, also with high bits the kernel ignores */
		CALL("socket(AF_VSOCK)", "EPERM", SYS_socket, AF_VSOCK_FAMILY, SOCK_STREAM, 0),
		CALL("socket(AF_ALG)", "EPERM", SYS_socket, AF_ALG_FAMILY, SOCK_SEQPACKET, 0),
		CALL("socket(1<<32|AF_VSOCK)", "EPERM", SYS_socket, (1L << 32) | AF_VSOCK_FAMILY, SOCK_STREAM,
			0),
		/* what must keep working */
		CALL("getpid", "allowed", SYS_getpid, 0),
		FN("clone(SIGCHLD)", "allowed", clone_fork),
		CALL("personality(0xffffffff)", "allowed", SYS_personality, bad),
		CALL("personality(PER_LINUX)", "allowed", SYS_personality, 0),
		CALL("socket(AF_UNIX)", "allowed", SYS_socket, AF_UNIX, SOCK_STREAM, 0),
		CALL("socket(AF_INET)", "allowed", SYS_socket, AF_INET, SOCK_DGRAM, 0),
		CALL("ptrace(PTRACE_TRACEME)", "allowed", SYS_ptrace, PTRACE_TRACEME, 0, 0, 0),
		FN("clock_adjtime (a read)", "allowed", clock_adjtime_read),
#if defined(__x86_64__)
		/* another ABI's entry point */
		FN("int 0x80 (i386 getpid)", "SIGSYS", int80_getpid),
		FN("x32 getpid", "SIGSYS", x32_getpid),
#endif
	};
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
		run(&probes[i]);
	return 0;
}
