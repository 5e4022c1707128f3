/* What the init does once its sandbox is set up: it serves the backend's
 * requests (lib/init_wire.h: starting commands, signalling them, holding
 * descriptors across a checkpoint), reports each command's end, and reaps
 * every orphan of the sandbox. */
#ifndef E2B_INIT_SERVE_H
#define E2B_INIT_SERVE_H

/* What every command would otherwise undo for itself, done once for all
 * before serving: no signal handled or ignored (SIG_IGN survives execve,
 * and the backend the init was cloned from ignores SIGPIPE; the init
 * handles none, its sends say MSG_NOSIGNAL), and the capability bounding
 * set cut to what a command may keep (INIT_CAPS_KEPT). The bounding set
 * limits only what an execve may gain: the init executes nothing more and
 * keeps its own capabilities. 0, or -1 with errno when the set could not
 * be cut (then no command may start). */
int init_serve_prepare(void);

/* Forever. The requests and events sockets are INIT_FD_REQUESTS and
 * INIT_FD_EVENTS; without them (a backend that closed its ends) it only
 * reaps. */
__attribute__((noreturn)) void init_serve(void);

#endif
