/* What envd logs of a sandbox's processes, into the sandbox's log
 * (registry/registry_log.h) as envd words it: "Process with pid N started"
 * with its command, "Process with pid N ended" with its status. The
 * processes of the process service (Start), and a template's start command,
 * whose output goes there too, a line each; the backend's other commands (a
 * template's ready checks) are not logged. Calls the status text and
 * registry/. */
#ifndef E2B_BACKEND_PROCESS_LOG_H
#define E2B_BACKEND_PROCESS_LOG_H

#include "envd/process/process_table.h"

#include <stddef.h>
#include <stdint.h>

void process_log_start(struct proc *p);
/* From now on its output goes to the log as well, a line each (stdout
 * "info", stderr "warn"; a line past REGISTRY_LOG_LINE_MAX is cut), and is
 * read as it comes (process_update_reading). 0, or -1 out of memory. */
int process_log_output_on(struct proc *p);
void process_log_output(struct proc *p, enum proc_output_kind kind, const uint8_t *data, size_t len);
/* After the end, only for a process whose start was logged. */
void process_log_end(struct proc *p);
/* What process_log_output_on took. */
void process_log_free(struct proc *p);

#endif
