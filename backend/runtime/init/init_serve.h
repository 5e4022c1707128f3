/* What the init does once its sandbox is set up: it serves the backend's
 * requests (lib/init_wire.h: starting commands, signalling them, holding
 * descriptors across a checkpoint), reports each command's end, and reaps
 * every orphan of the sandbox. */
#ifndef E2B_INIT_SERVE_H
#define E2B_INIT_SERVE_H

/* Forever. The requests and events sockets are INIT_FD_REQUESTS and
 * INIT_FD_EVENTS; without them (a backend that closed its ends) it only
 * reaps. */
__attribute__((noreturn)) void init_serve(void);

#endif
