/* The HTTP side of the program, as subsystems of main.c's table (an open
 * and a close on struct backend, backend.h): the connection tracker with
 * its cap (http/http_conns.h), each sandbox's own envd port, the API and
 * envd servers, and their listeners, bound last, with the ready line a
 * harness waits for on stdout. An open that fails undoes what it did. */
#ifndef E2B_BACKEND_SERVING_H
#define E2B_BACKEND_SERVING_H

struct backend;

int serving_connections_up(struct backend *b);
/* After every connection is gone. */
void serving_connections_down(struct backend *b);
int serving_envd_ports_up(struct backend *b);
/* After the registry's removing hooks. */
void serving_envd_ports_down(struct backend *b);
/* The servers of the API and of envd, with their dispatchers. */
int serving_servers_up(struct backend *b);
void serving_servers_down(struct backend *b);
/* Binds both listeners (they go with their servers) and prints the ready
 * line. */
int serving_listen_up(struct backend *b);

#endif
