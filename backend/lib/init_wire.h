/* The messages between the backend and a sandbox's init
 * (runtime/runtime_spawn.c on one side, runtime/init/ on the other). The
 * init is the parent of every command of its sandbox, so that the whole
 * sandbox is one process tree under it (what a checkpoint dumps): the
 * backend asks it to start a command, and it tells the backend when one
 * ends. Two SOCK_SEQPACKET socket pairs: requests (the backend asks, the
 * init answers each in order) and events (the init's exit reports, read by
 * the backend's loop). Both ends are on one machine: native byte order.
 *
 * What the init receives comes from the backend; what the backend receives
 * comes from a sandbox (its root could have taken the init over), so the
 * backend checks every field it reads. It declares no functions. */
#ifndef E2B_BACKEND_INIT_WIRE_H
#define E2B_BACKEND_INIT_WIRE_H

#include <stdint.h>

/* The init's ends, as its descriptors. */
#define INIT_FD_REQUESTS 5
#define INIT_FD_EVENTS 6

/* At most this many descriptors in one message (SCM_MAX_FD is 253). */
#define INIT_WIRE_FDS_MAX 240

enum init_wire_type {
	/* backend -> init, answered by INIT_REPLY. A memfd holds the command
	 * (struct init_spawn_blob); the answer's descriptors are the new
	 * process's pidfd, then its output (stdout, or the pty's master), its
	 * stderr (pipes only) and its stdin (a pipe when asked for), as
	 * INIT_REPLY_HAS_* say. */
	INIT_SPAWN = 1,
	/* backend -> init, no answer: signal `value` to the process group of
	 * command `pid`, while the init has not reaped it. */
	INIT_SIGNAL = 2,
	/* backend -> init, answered: hold these descriptors under these keys
	 * (a checkpoint: the outer ends of the commands' pipes and ptys are
	 * then inside the tree). */
	INIT_PARK = 3,
	/* backend -> init: give every held descriptor back (INIT_PARKED
	 * messages, then INIT_REPLY with value = how many) and close them. */
	INIT_UNPARK = 4,
	/* backend -> init, answered: close every held descriptor. */
	INIT_DROP = 5,
	/* backend -> init, answered on the new socket: take these two
	 * descriptors as the requests and events sockets (a restored init gets
	 * sockets made in its restored network namespace). */
	INIT_SWAP = 6,
	/* backend -> init, answered: set the init's dumpable flag to `value`.
	 * 1 while a checkpoint is made: CRIU checks the tree's namespaces from
	 * inside its user namespace, and a restored init's memory belongs to
	 * the machine's user namespace (restored without an exec), so a
	 * non-dumpable one would be out of its reach. Back to 0 after. */
	INIT_DUMPABLE = 7,
	/* init -> backend on the requests socket. */
	INIT_REPLY = 16,
	INIT_PARKED = 17,
	/* init -> backend on the events socket: command `pid` ended with wait
	 * status `value`. */
	INIT_EXITED = 18,
};

/* INIT_SPAWN's flags. */
#define INIT_SPAWN_PTY 1u
#define INIT_SPAWN_STDIN_PIPE 2u
#define INIT_SPAWN_NO_GROUPS 4u /* one id only (rootless): no setgroups */

/* INIT_REPLY's flags (a spawn's answer): which descriptors follow, in
 * this order; and when value is an errno, which step failed. */
#define INIT_REPLY_HAS_PIDFD 1u
#define INIT_REPLY_HAS_OUT 2u
#define INIT_REPLY_HAS_ERR 4u
#define INIT_REPLY_HAS_IN 8u
#define INIT_REPLY_FAILED_PTY 16u
#define INIT_REPLY_FAILED_PIPES 32u
#define INIT_REPLY_FAILED_FORK 64u /* EAGAIN: the sandbox's pids.max, or its init's table full */

struct init_wire_msg {
	uint32_t type;
	uint32_t flags;
	int32_t pid;         /* a command's pid in the sandbox */
	int32_t value;       /* an errno (0: done), a signal, a wait status, a count */
	uint16_t cols, rows; /* a pty's size */
	uint32_t nkeys;      /* PARK, PARKED: keys[] that follow, one per descriptor */
};

/* The memfd of an INIT_SPAWN: this header, then ngroups gids (uint32_t),
 * then NUL-terminated strings: cwd, argc arguments, envc environment
 * entries, npaths paths to try execve on in order (execvp's search, made by
 * the backend). At most INIT_SPAWN_BLOB_MAX bytes. */
#define INIT_SPAWN_BLOB_MAX (64u * 1024 * 1024)
#define INIT_SPAWN_GROUPS_MAX 64
struct init_spawn_blob {
	uint32_t size; /* of everything, this header included */
	uint32_t uid, gid, ngroups;
	uint32_t argc, envc, npaths;
	uint32_t pad;
	uint64_t nofile_cur, nofile_max; /* RLIMIT_NOFILE the backend was started with */
};

/* The capabilities a command keeps (bits of CAP_*): Docker's default set
 * without CAP_MKNOD. Enough for sudo, chown, binding low ports; not enough
 * to mount, load modules, trace or reach raw devices. */
#define INIT_CAPS_KEPT \
	((1ull << 0) | (1ull << 1) | (1ull << 3) | (1ull << 4) | (1ull << 5) | (1ull << 6) | (1ull << 7) | \
		(1ull << 8) | (1ull << 10) | (1ull << 13) | (1ull << 18) | (1ull << 29) | (1ull << 31))
/* CAP_CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, FSETID 4, KILL 5, SETGID 6, SETUID 7,
 * SETPCAP 8, NET_BIND_SERVICE 10, NET_RAW 13, SYS_CHROOT 18, AUDIT_WRITE 29,
 * SETFCAP 31. */

#endif
