/* Commands of an isolated sandbox are its init's children
 * (lib/init_wire.h): the backend asks the init to start one and hears from
 * it when one ends, so that every process of a sandbox is in one tree under
 * its init, which a checkpoint dumps whole. Also holding the commands' outer
 * descriptors in the init across a checkpoint. Calls the runtime's state and
 * lib/. On the event loop. */
#ifndef E2B_BACKEND_RUNTIME_SPAWN_H
#define E2B_BACKEND_RUNTIME_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sandbox;
struct sandbox_rt;
struct sandbox_user;

/* What to start: argv, envp and the paths to try execve on (execvp's search,
 * done by the caller) are NULL-terminated. */
struct runtime_command {
	char *const *argv, *const *envp, *const *paths;
	const char *cwd;
	const struct sandbox_user *account;
	bool pty, stdin_pipe;
	uint16_t cols, rows;
};
/* What was started: its pid in the sandbox, a pidfd (-1 when the init sent
 * none), its stdout (or the pty's master), stderr (-1 with a pty) and stdin
 * (a pipe, or a dup of the master; -1 when not asked for), all
 * non-blocking and close-on-exec. */
struct runtime_started {
	pid_t ns_pid;
	int pidfd, out_fd, err_fd, in_fd;
};
enum runtime_spawn_step {
	RUNTIME_SPAWN_INIT,
	RUNTIME_SPAWN_PTY,
	RUNTIME_SPAWN_PIPES,
	RUNTIME_SPAWN_FORK
};
/* 0, or -1 with errno and which step failed: INIT (ESRCH: its init has
 * ended, or never answered), PTY, PIPES, FORK (EAGAIN: the sandbox's pids
 * limit). Blocks until the init answers: it is the sandbox's to run (a
 * frozen sandbox answers once thawed). */
int runtime_spawn(const struct sandbox *sb, const struct runtime_command *c, struct runtime_started *out,
	enum runtime_spawn_step *step);
/* Signals the process group of command ns_pid, unless its init has reaped
 * it. Never blocks (a request the socket has no room for is dropped). */
int runtime_spawn_signal(const struct sandbox *sb, pid_t ns_pid, int sig);
/* Who hears of each command's end: fn(ctx, sb, its pid in the sandbox, its
 * wait status), from the event loop. One listener (the process manager). */
void runtime_spawn_on_exit(void (*fn)(void *ctx, struct sandbox *sb, pid_t ns_pid, int status), void *ctx);

/* Checkpoints (runtime_checkpoint.h): the init holds fds[i] under keys[i]
 * (its copies: the caller keeps its own); unpark gives every held one back
 * through each(ctx, key, fd) (the fd is the caller's) and the init closes
 * its copies; drop closes them. 0, or -1 with errno. */
int runtime_spawn_park(const struct sandbox *sb, const uint64_t *keys, const int *fds, size_t n);
int runtime_spawn_unpark(const struct sandbox *sb, void (*each)(void *ctx, uint64_t key, int fd), void *ctx);
int runtime_spawn_drop(const struct sandbox *sb);
/* The init's dumpable flag set to on (lib/init_wire.h, INIT_DUMPABLE):
 * 0, or -1 with errno. */
int runtime_spawn_dumpable(const struct sandbox *sb, bool on);
/* A restored init gets new sockets, made in its (restored) network
 * namespace (rt->ns_fd open), through the ones it was restored with. 0, or
 * -1 with errno (the old ones kept). */
int runtime_spawn_swap(struct sandbox *sb);

/* The runtime's own: the socket pairs of a new init, made in its network
 * namespace (rt->ns_fd, open; the init's ends are init_fds[0] for requests
 * and init_fds[1] for events; the caller closes them once the init has its
 * copies), and the watch on its events, started on the loop once it
 * reported "ok" and ended with its descriptors. */
int runtime_spawn_sockets(struct sandbox_rt *rt, int init_fds[2]);
int runtime_spawn_watch(struct sandbox *sb);
void runtime_spawn_close(struct sandbox_rt *rt);

#endif
