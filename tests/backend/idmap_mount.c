/* idmap-mount SOURCE TARGET UID_BASE GID_BASE COUNT: mounts directory
 * SOURCE read-only at TARGET (in the caller's mount namespace) with its ids
 * shifted: a file of uid X (gid Y) in SOURCE shows as UID_BASE + X (GID_BASE
 * + Y) at TARGET, for X, Y < COUNT. The rootless tests give
 * an unprivileged backend the root-built template this way, as if the user
 * had built it from their own subordinate ids (tests/lib/rootless.mjs).
 * Needs root; undo with umount TARGET. Uses the runtime's own helpers. */
#define _GNU_SOURCE
#include "runtime/runtime_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: idmap-mount SOURCE TARGET UID_BASE GID_BASE COUNT\n");
		return 2;
	}
	uid_t uid_base = (uid_t)strtoul(argv[3], NULL, 10);
	gid_t gid_base = (gid_t)strtoul(argv[4], NULL, 10);
	unsigned long count = strtoul(argv[5], NULL, 10);
	int userns = runtime_userns_new(uid_base, gid_base, count);
	if (userns < 0) {
		fprintf(stderr, "idmap-mount: user namespace %u/%u:%lu: %s\n", (unsigned)uid_base,
			(unsigned)gid_base, count, strerror(errno));
		return 1;
	}
	if (runtime_userns_mount_lower(argv[1], userns, AT_FDCWD, argv[2]) != 0) {
		fprintf(stderr, "idmap-mount: %s on %s: %s\n", argv[1], argv[2], strerror(errno));
		return 1;
	}
	close(userns);
	return 0;
}
