/* Starting a process the way envd does: by the sandbox's init (runtime/)
 * or, without isolation, on the host; as the account, in its directory; a
 * PTY when asked. Calls runtime/, http/ (Connect errors) and lib/. */
#ifndef E2B_BACKEND_PROCESS_SPAWN_H
#define E2B_BACKEND_PROCESS_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cJSON;
struct err;
struct sandbox;
struct sandbox_user;

struct proc_spawn {
	const char *cmd;
	const struct cJSON *args; /* array of strings or NULL */
	const struct cJSON *sandbox_envs;
	const struct cJSON *request_envs;
	const char *home;
	const char *user;
	const char *path_env;
	const char *cwd; /* resolved, absolute */
	bool pty;
	uint16_t cols, rows;
	bool stdin_pipe;
	const struct sandbox *sb;           /* where it runs */
	const struct sandbox_user *account; /* as whom (runtime/runtime_users.h) */
};
struct proc_spawned {
	pid_t pid;       /* the backend's child (no isolation); 0 when the sandbox's init started it */
	pid_t ns_pid;    /* the pid the sandbox sees */
	int pidfd;       /* the process (-1: none yet) */
	bool init_child; /* the sandbox's init is its parent: it reports its end (runtime_spawn.h) */
	int out_fd;      /* stdout pipe, or the PTY master */
	int err_fd;      /* stderr pipe, or -1 */
	int in_fd;       /* stdin pipe, a dup of the PTY master, or -1 */
};
int process_spawn_start(const struct proc_spawn *spec, struct proc_spawned *out, struct err *err);

#endif
