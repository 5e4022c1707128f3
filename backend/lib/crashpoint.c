/* Test-only crash points (crashpoint.h). */
#include "lib/crashpoint.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VARIABLE "E2B_LOCAL_CRASH_AT"

static char point[64];

void crashpoint_init(void)
{
	const char *value = getenv(VARIABLE);
	if (value)
		snprintf(point, sizeof point, "%s", value);
	unsetenv(VARIABLE);
}

void crashpoint(const char *name)
{
	if (point[0] && strcmp(point, name) == 0) {
		fprintf(stderr, "e2b-local-backend: crash point %s reached: killing itself\n", name);
		kill(getpid(), SIGKILL);
	}
}
