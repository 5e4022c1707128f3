/* The syscall policy (runtime_seccomp.h), after moby's default seccomp
 * profile (github.com/moby/profiles, seccomp/default.json): everything not
 * allowed below fails with EPERM. The profile's capability-dependent parts
 * are taken as they apply to a sandbox's commands, which keep Docker's
 * default capabilities (runtime_enter.c): chroot is allowed (CAP_SYS_CHROOT),
 * clone without namespace flags, and nothing that needs CAP_SYS_ADMIN, SYS_BOOT,
 * SYS_MODULE, SYS_PACCT, SYS_PTRACE, SYS_RAWIO, SYS_TIME, SYS_TTY_CONFIG,
 * SYS_NICE, SYSLOG, BPF, PERFMON or DAC_READ_SEARCH. The list of denied calls
 * is in docs/backend/runtime-and-isolation.md, "Syscall policy". */
#define _GNU_SOURCE
#include "runtime/runtime_seccomp.h"

#include "lib/err.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Moby's unconditional allow list, less the names no 64-bit x86 kernel has
 * (the 32-bit and time64 variants, socketcall, ipc, ...). Names this
 * architecture lacks are skipped when the filter is built. */
static const char *const allowed[] = {
	"accept",
	"accept4",
	"access",
	"adjtimex",
	"alarm",
	"bind",
	"brk",
	"cachestat",
	"capget",
	"capset",
	"chdir",
	"chmod",
	"chown",
	"clock_adjtime",
	"clock_getres",
	"clock_gettime",
	"clock_nanosleep",
	"close",
	"close_range",
	"connect",
	"copy_file_range",
	"creat",
	"dup",
	"dup2",
	"dup3",
	"epoll_create",
	"epoll_create1",
	"epoll_ctl",
	"epoll_ctl_old",
	"epoll_pwait",
	"epoll_pwait2",
	"epoll_wait",
	"epoll_wait_old",
	"eventfd",
	"eventfd2",
	"execve",
	"execveat",
	"exit",
	"exit_group",
	"faccessat",
	"faccessat2",
	"fadvise64",
	"fallocate",
	"fanotify_mark",
	"fchdir",
	"fchmod",
	"fchmodat",
	"fchmodat2",
	"fchown",
	"fchownat",
	"fcntl",
	"fdatasync",
	"fgetxattr",
	"flistxattr",
	"flock",
	"fork",
	"fremovexattr",
	"fsetxattr",
	"fstat",
	"fstatfs",
	"fsync",
	"ftruncate",
	"futex",
	"futex_requeue",
	"futex_wait",
	"futex_waitv",
	"futex_wake",
	"futimesat",
	"getcpu",
	"getcwd",
	"getdents",
	"getdents64",
	"getegid",
	"geteuid",
	"getgid",
	"getgroups",
	"getitimer",
	"getpeername",
	"getpgid",
	"getpgrp",
	"getpid",
	"getppid",
	"getpriority",
	"getrandom",
	"getresgid",
	"getresuid",
	"getrlimit",
	"get_robust_list",
	"getrusage",
	"getsid",
	"getsockname",
	"getsockopt",
	"get_thread_area",
	"gettid",
	"gettimeofday",
	"getuid",
	"getxattr",
	"inotify_add_watch",
	"inotify_init",
	"inotify_init1",
	"inotify_rm_watch",
	"io_cancel",
	"ioctl",
	"io_destroy",
	"io_getevents",
	"io_pgetevents",
	"ioprio_get",
	"ioprio_set",
	"io_setup",
	"io_submit",
	"kill",
	"landlock_add_rule",
	"landlock_create_ruleset",
	"landlock_restrict_self",
	"lchown",
	"lgetxattr",
	"link",
	"linkat",
	"listen",
	"listxattr",
	"llistxattr",
	"lremovexattr",
	"lseek",
	"lsetxattr",
	"lstat",
	"madvise",
	"map_shadow_stack",
	"membarrier",
	"memfd_create",
	"memfd_secret",
	"mincore",
	"mkdir",
	"mkdirat",
	"mknod",
	"mknodat",
	"mlock",
	"mlock2",
	"mlockall",
	"mmap",
	"mprotect",
	"mq_getsetattr",
	"mq_notify",
	"mq_open",
	"mq_timedreceive",
	"mq_timedsend",
	"mq_unlink",
	"mremap",
	"msgctl",
	"msgget",
	"msgrcv",
	"msgsnd",
	"msync",
	"munlock",
	"munlockall",
	"munmap",
	"name_to_handle_at",
	"nanosleep",
	"newfstatat",
	"open",
	"openat",
	"openat2",
	"pause",
	"pidfd_open",
	"pidfd_send_signal",
	"pipe",
	"pipe2",
	"pkey_alloc",
	"pkey_free",
	"pkey_mprotect",
	"poll",
	"ppoll",
	"prctl",
	"pread64",
	"preadv",
	"preadv2",
	"prlimit64",
	"process_mrelease",
	"pselect6",
	"pwrite64",
	"pwritev",
	"pwritev2",
	"read",
	"readahead",
	"readlink",
	"readlinkat",
	"readv",
	"recvfrom",
	"recvmmsg",
	"recvmsg",
	"remap_file_pages",
	"removexattr",
	"rename",
	"renameat",
	"renameat2",
	"restart_syscall",
	"rmdir",
	"rseq",
	"rt_sigaction",
	"rt_sigpending",
	"rt_sigprocmask",
	"rt_sigqueueinfo",
	"rt_sigreturn",
	"rt_sigsuspend",
	"rt_sigtimedwait",
	"rt_tgsigqueueinfo",
	"sched_getaffinity",
	"sched_getattr",
	"sched_getparam",
	"sched_get_priority_max",
	"sched_get_priority_min",
	"sched_getscheduler",
	"sched_rr_get_interval",
	"sched_setaffinity",
	"sched_setattr",
	"sched_setparam",
	"sched_setscheduler",
	"sched_yield",
	"seccomp",
	"select",
	"semctl",
	"semget",
	"semop",
	"semtimedop",
	"sendfile",
	"sendmmsg",
	"sendmsg",
	"sendto",
	"setfsgid",
	"setfsuid",
	"setgid",
	"setgroups",
	"setitimer",
	"setpgid",
	"setpriority",
	"setregid",
	"setresgid",
	"setresuid",
	"setreuid",
	"setrlimit",
	"set_robust_list",
	"setsid",
	"setsockopt",
	"set_thread_area",
	"set_tid_address",
	"setuid",
	"setxattr",
	"shmat",
	"shmctl",
	"shmdt",
	"shmget",
	"shutdown",
	"sigaltstack",
	"signalfd",
	"signalfd4",
	"socketpair",
	"splice",
	"stat",
	"statfs",
	"statx",
	"symlink",
	"symlinkat",
	"sync",
	"sync_file_range",
	"syncfs",
	"sysinfo",
	"tee",
	"tgkill",
	"time",
	"timer_create",
	"timer_delete",
	"timer_getoverrun",
	"timer_gettime",
	"timer_settime",
	"timerfd_create",
	"timerfd_gettime",
	"timerfd_settime",
	"times",
	"tkill",
	"truncate",
	"umask",
	"uname",
	"unlink",
	"unlinkat",
	"utime",
	"utimensat",
	"utimes",
	"vfork",
	"vmsplice",
	"wait4",
	"waitid",
	"write",
	"writev",
	/* Moby's conditional ones that hold here: ptrace and the process_vm calls
	 * (kernel 4.8 and later: ptrace no longer bypasses seccomp), chroot
	 * (CAP_SYS_CHROOT is kept), and x86's own calls. */
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"chroot",
	"arch_prctl",
	"modify_ldt",
};

/* Calls of moby's list newer than Debian 12's libseccomp (2.5.4) knows, by
 * their x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
static const struct {
	const char *name;
	int x86_64;
} newer[] = {
	{"uretprobe", 335},
	{"statmount", 457},
	{"listmount", 458},
	{"mseal", 462},
	{"setxattrat", 463},
	{"getxattrat", 464},
	{"listxattrat", 465},
	{"removexattrat", 466},
};

/* personality(2) values moby allows: PER_LINUX, PER_LINUX32, UNAME26,
 * UNAME26|PER_LINUX32 and 0xffffffff (the query). Compared as 64 bits, so a
 * value with high bits set is refused too. */
static const uint64_t personalities[] = {0x0, 0x8, 0x20000, 0x20008, 0xffffffff};

/* Every CLONE_NEW* flag clone(2) can carry: NS, CGROUP, UTS, IPC, USER, PID, NET. */
#define CLONE_NAMESPACES 0x7E020000ULL

/* Socket families moby allows: all but AF_ALG (38) and AF_VSOCK (40), listed
 * up to AF_MCTP (45) rather than as "> 40": the kernel reads only the low 32
 * bits of the argument, so 0x1_00000028 would pass "> 40" as AF_VSOCK. */
#define AF_ALG_FAMILY 38
static const uint64_t families_above_alg[] = {39, 41, 42, 43, 44, 45};

static struct sock_fprog program;
static int program_fd = -1;

static int allow_name(scmp_filter_ctx ctx, const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR && seccomp_arch_native() == SCMP_ARCH_X86_64)
		for (size_t i = 0; i < sizeof newer / sizeof newer[0]; i++)
			if (strcmp(newer[i].name, name) == 0)
				nr = newer[i].x86_64;
	if (nr < 0)
		return 0; /* not a call of this architecture */
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
}

static int add_rules(scmp_filter_ctx ctx)
{
	int rc = 0;
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0] && rc == 0; i++)
		rc = allow_name(ctx, allowed[i]);
	for (size_t i = 0; i < sizeof newer / sizeof newer[0] && rc == 0; i++)
		rc = allow_name(ctx, newer[i].name);
	for (size_t i = 0; i < sizeof personalities / sizeof personalities[0] && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
			SCMP_A0(SCMP_CMP_EQ, personalities[i]));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			SCMP_A0(SCMP_CMP_LT, AF_ALG_FAMILY));
	for (size_t i = 0; i < sizeof families_above_alg / sizeof families_above_alg[0] && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
			SCMP_A0(SCMP_CMP_EQ, families_above_alg[i]));
	/* fork, vfork and threads: clone without a new namespace (a user
	 * namespace would give back every capability). */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
			SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NAMESPACES, 0));
	/* clone3's flags are in memory a filter cannot read. ENOSYS, as in
	 * moby, makes glibc fall back to clone, which is checked above. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	return rc;
}

/* The program as the kernel takes it, through a sealed memfd (libseccomp
 * 2.5 exports to a descriptor only). */
static int export_program(scmp_filter_ctx ctx, struct err *err)
{
	int fd = memfd_create("e2b-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return err_set(err, errno, "memfd_create failed");
	off_t size;
	if (seccomp_export_bpf(ctx, fd) != 0 || (size = lseek(fd, 0, SEEK_END)) <= 0 ||
		size % (off_t)sizeof(struct sock_filter) != 0 ||
		size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter))) {
		close(fd);
		return err_set(err, 0, "cannot export the filter");
	}
	struct sock_filter *insns = malloc((size_t)size);
	if (!insns || pread(fd, insns, (size_t)size, 0) != size ||
		fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
		free(insns);
		close(fd);
		return err_set(err, 0, "cannot read the exported filter back");
	}
	program.filter = insns;
	program.len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	program_fd = fd;
	return 0;
}

/* Installs the program in a throwaway child: a kernel without seccomp
 * filters, or one that rejects this program, is found at start. */
static int kernel_accepts(struct err *err)
{
	pid_t pid = fork();
	if (pid < 0)
		return err_set(err, errno, "fork failed");
	if (pid == 0)
		_exit(runtime_seccomp_apply() == 0 ? 0 : 1);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(err, errno, "waitpid failed");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return err_set(err, 0, "the kernel refuses seccomp filters (prctl PR_SET_SECCOMP)");
}

int runtime_seccomp_build(struct err *err)
{
	if (program.filter)
		return 0;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	if (!ctx)
		return err_set(err, 0, "seccomp: libseccomp cannot start a filter");
	int rc = 0;
	/* A call through another ABI's entry (int 0x80 for i386, or x32's
	 * numbers with bit 30 set) would escape every rule: the process is
	 * killed (SIGSYS). */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0 ||
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) != 0 || /* a binary tree, not a list */
		add_rules(ctx) != 0)
		rc = err_set(err, 0, "seccomp: cannot build the policy with libseccomp");
	if (rc == 0)
		rc = export_program(ctx, err);
	seccomp_release(ctx);
	if (rc == 0)
		rc = kernel_accepts(err);
	if (rc != 0)
		runtime_seccomp_release();
	return rc;
}

bool runtime_seccomp_active(void)
{
	return program.filter != NULL;
}

int runtime_seccomp_apply(void)
{
	if (!program.filter) {
		errno = EINVAL;
		return -1;
	}
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

int runtime_seccomp_fd(void)
{
	return program_fd;
}

void runtime_seccomp_release(void)
{
	free(program.filter);
	program.filter = NULL;
	program.len = 0;
	if (program_fd >= 0)
		close(program_fd);
	program_fd = -1;
}
