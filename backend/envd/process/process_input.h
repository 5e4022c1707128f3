/* stdin and PTY input of a process: SendInput writes what the pipe or PTY
 * accepts and queues the rest, answering once its bytes are written (as
 * envd's blocking write); CloseStdin waits for the queue. Never blocks the
 * backend. Called by the manager (setup and teardown) and the RPC handlers;
 * calls only http/. */
#ifndef E2B_BACKEND_PROCESS_INPUT_H
#define E2B_BACKEND_PROCESS_INPUT_H

#include "envd/process/process_table.h"

/* The input queue, and the writable event when p->in_fd is open. -1 when
 * out of memory. */
int process_input_init(struct proc *p);
/* Input: answers req itself (now or once written). */
void process_send_input(struct proc *p, struct evhttp_request *req, const uint8_t *data, size_t len);
void process_close_stdin(struct proc *p, struct evhttp_request *req);
/* The process ended: held requests are answered (input fails with a broken
 * pipe, a close succeeds) and the pipe is closed. */
void process_input_end(struct proc *p);
/* process_input_end, and the queue is freed. */
void process_input_free(struct proc *p);

#endif
