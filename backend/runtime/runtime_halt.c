/* Halting a sandbox at shutdown (runtime_halt.h). */
#define _GNU_SOURCE
#include "runtime/runtime_halt.h"

#include "registry/registry.h"
#include "runtime/runtime_cgroup.h"
#include "runtime/runtime_state.h"

#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Every process listed in one of the sandbox's cgroups. */
static void kill_listed(const char *dir)
{
	char path[512];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	int pid;
	while (fscanf(f, "%d", &pid) == 1)
		kill(pid, SIGKILL);
	fclose(f);
}

void runtime_sandbox_halt(struct sandbox *sb)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt || (rt->kept && rt->init_pid <= 0))
		return; /* cold: nothing runs */
	if (rt->cg[RT_FREEZER]) {
		/* A frozen task keeps its SIGKILL pending and dies as it thaws,
		 * without returning to its own code. */
		kill_listed(rt->cg[RT_FREEZER]);
		runtime_write_at(rt->cg[RT_FREEZER], "freezer.state", "THAWED");
	}
	/* Through its pidfd: its pid may name another process once it has
	 * been reaped (runtime_remove.c). Rootless sandboxes have no freezer:
	 * their paused processes are stopped, and SIGKILL ends stopped ones. */
	if (rt->init_pidfd >= 0)
		syscall(SYS_pidfd_send_signal, rt->init_pidfd, SIGKILL, NULL, 0);
	else if (rt->init_pid > 0)
		kill(rt->init_pid, SIGKILL);
}
