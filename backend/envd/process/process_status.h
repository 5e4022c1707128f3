/* The text envd gives a process's end: Go's os.ProcessState text. Pure. */
#ifndef E2B_BACKEND_PROCESS_STATUS_H
#define E2B_BACKEND_PROCESS_STATUS_H

#include <stddef.h>

/* Go's os.ProcessState text for a wait status: "exit status 3", "signal: killed". */
void process_status_text(int wait_status, char *out, size_t cap);

#endif
