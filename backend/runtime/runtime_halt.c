/* Halting a sandbox at shutdown (runtime_halt.h). */
#define _GNU_SOURCE
#include "runtime/runtime_halt.h"

#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_state.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

void runtime_sandbox_halt(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt || (rt->kept && rt->init_pid <= 0))
		return; /* cold: nothing runs */
	/* Everything in its cgroup killed, a paused one without running again
	 * (runtime_cgroup.h). */
	runtime_cgroup_kill(&rt->cg);
	/* Through its pidfd: its pid may name another process once it has
	 * been reaped (runtime_remove.c). Rootless sandboxes have no freezer:
	 * their paused processes are stopped, and SIGKILL ends stopped ones. */
	if (rt->init_pidfd >= 0)
		syscall(SYS_pidfd_send_signal, rt->init_pidfd, SIGKILL, NULL, 0);
	else if (rt->init_pid > 0)
		kill(rt->init_pid, SIGKILL);
}
