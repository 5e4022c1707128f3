/* A command of the sandbox, between the init's fork and its exec: the
 * process envd's Start asked for (lib/init_wire.h, INIT_SPAWN). */
#ifndef E2B_INIT_CHILD_H
#define E2B_INIT_CHILD_H

#include <stdint.h>

/* The descriptors the child starts from: its stdin, stdout and stderr
 * pipes' inner ends (in -1: /dev/null), or a pty's terminal end (slave,
 * else -1), and the memfd holding the command (struct init_spawn_blob). */
struct init_child_fds {
	int in, out, err, slave, blob;
};

/* Becomes the command: a session of its own (the pty as its controlling
 * terminal), its descriptors, the capabilities and ids of its account, its
 * working directory, and execve along the paths the backend searched. Never
 * returns: on failure it says why on its stderr and exits 125 (it could not
 * become the command), 126 or 127 (exec failed, as a shell's codes). */
__attribute__((noreturn)) void init_child_run(const struct init_child_fds *fds, uint32_t flags);

#endif
