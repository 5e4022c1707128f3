/* The runtime's state (runtime_state.h). */
#include "runtime/runtime_state.h"

#include <string.h>

static struct runtime self = {.mode = ISOLATION_NONE,
	.self_pid_ns = -1,
	.cwd_fd = -1,
	.init_fd = -1,
	.cgroups = {.devices_prog = -1}};

struct runtime *runtime_self(void)
{
	return &self;
}

void runtime_self_reset(void)
{
	memset(&self, 0, sizeof self);
	self.self_pid_ns = self.cwd_fd = self.init_fd = self.cgroups.devices_prog = -1;
	self.mode = ISOLATION_NONE;
}
