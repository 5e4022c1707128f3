/* A command of the sandbox between the init's clone and its exec: the
 * process envd's Start asked for (lib/init_wire.h, INIT_SPAWN). */
#ifndef E2B_INIT_CHILD_H
#define E2B_INIT_CHILD_H

#include "init_command.h"

#include <stdint.h>

/* What the child starts from, all made by the init before the clone: its
 * stdin, stdout and stderr pipes' inner ends (in -1: /dev/null), or a
 * pty's terminal end (slave, else -1); the request's INIT_SPAWN_* flags;
 * and the command, read from the request's memfd. */
struct init_child_args {
	int in, out, err, slave;
	uint32_t flags;
	struct init_command cmd;
};

/* The child's start (clone(2)'s fn, given a struct init_child_args). It
 * shares the init's memory until its execve, while the init runs on: it
 * calls the kernel directly (init_raw.h) and writes no memory but its own
 * stack and its command's vectors. Becomes the command: a session of its
 * own (the pty as its controlling terminal), its descriptors, the ids of
 * its account, its working directory, and execve along the paths the
 * backend searched. Never returns: on failure it says why on its stderr and
 * exits 125 (it could not become the command), 126 or 127 (exec failed, as
 * a shell's codes). */
int init_child_main(void *args);

#endif
