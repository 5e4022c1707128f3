/* The descriptor limit raised for the backend, kept for its commands
 * (fd_limit.h). */
#include "lib/fd_limit.h"

#include <stdbool.h>
#include <stddef.h>

static struct rlimit started;
static bool raised_it;

void fd_limit_raise(void)
{
	if (getrlimit(RLIMIT_NOFILE, &started) != 0 || started.rlim_cur >= started.rlim_max)
		return;
	struct rlimit raised = {.rlim_cur = started.rlim_max, .rlim_max = started.rlim_max};
	raised_it = setrlimit(RLIMIT_NOFILE, &raised) == 0;
}

const struct rlimit *fd_limit_started(void)
{
	return raised_it ? &started : NULL;
}
