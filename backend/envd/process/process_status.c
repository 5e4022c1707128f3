/* The text of a process's wait status (process_status.h). */
#include "envd/process/process_status.h"

#include <stdio.h>
#include <sys/wait.h>

/* Go's syscall.Signal.String() on Linux. */
static const char *const signal_names[] = {
	[1] = "hangup",
	[2] = "interrupt",
	[3] = "quit",
	[4] = "illegal instruction",
	[5] = "trace/breakpoint trap",
	[6] = "aborted",
	[7] = "bus error",
	[8] = "floating point exception",
	[9] = "killed",
	[10] = "user defined signal 1",
	[11] = "segmentation fault",
	[12] = "user defined signal 2",
	[13] = "broken pipe",
	[14] = "alarm clock",
	[15] = "terminated",
	[16] = "stack fault",
	[17] = "child exited",
	[18] = "continued",
	[19] = "stopped (signal)",
	[20] = "stopped",
	[21] = "stopped (tty input)",
	[22] = "stopped (tty output)",
	[23] = "urgent I/O condition",
	[24] = "CPU time limit exceeded",
	[25] = "file size limit exceeded",
	[26] = "virtual timer expired",
	[27] = "profiling timer expired",
	[28] = "window changed",
	[29] = "I/O possible",
	[30] = "power failure",
	[31] = "bad system call",
};

void process_status_text(int status, char *out, size_t cap)
{
	if (WIFEXITED(status)) {
		snprintf(out, cap, "exit status %d", WEXITSTATUS(status));
		return;
	}
	if (!WIFSIGNALED(status)) {
		snprintf(out, cap, "unknown status %d", status);
		return;
	}
	int sig = WTERMSIG(status);
	const char *core = WCOREDUMP(status) ? " (core dumped)" : "";
	if (sig > 0 && (size_t)sig < sizeof signal_names / sizeof signal_names[0] && signal_names[sig])
		snprintf(out, cap, "signal: %s%s", signal_names[sig], core);
	else
		snprintf(out, cap, "signal: signal %d%s", sig, core);
}
