/* Cgroup migrations without a grace period (runtime_dynmods.h). */
#include "runtime/runtime_dynmods.h"

#include "lib/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define HIERARCHY_OPTIONS "none,name=e2b-local-backend,favordynmods"

static char *mount_point;
static bool active;

void runtime_dynmods_start(const char *state_root)
{
	mount_point = text_printf("%s/cgroup-dynmods", state_root);
	if (!mount_point)
		return;
	if (mkdir(mount_point, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr,
			"e2b-local-backend: %s: %s; cgroup migrations keep waiting for the "
			"kernel's grace periods\n",
			mount_point, strerror(errno));
		return;
	}
	if (mount("cgroup", mount_point, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, HIERARCHY_OPTIONS) !=
		0) {
		fprintf(stderr,
			"e2b-local-backend: the kernel has no cgroup favordynmods mode (%s): "
			"each cgroup migration may wait for a grace period (up to tens of ms)\n",
			strerror(errno));
		rmdir(mount_point);
		return;
	}
	active = true;
}

void runtime_dynmods_stop(void)
{
	if (mount_point && active) {
		umount2(mount_point, MNT_DETACH);
		rmdir(mount_point);
	}
	active = false;
	free(mount_point);
	mount_point = NULL;
}

bool runtime_dynmods_active(void)
{
	return active;
}
