/* seccomp-apply PROGRAM [ARG...]: runs PROGRAM under the sandbox's syscall
 * policy, built and installed by the backend's own code
 * (backend/runtime/runtime_seccomp.c) exactly as for a sandbox's command,
 * with every privilege of the caller otherwise. Needs CAP_SYS_ADMIN (root):
 * like the backend, it sets no NO_NEW_PRIVS. tests/node/backend-seccomp.test.mjs
 * runs seccomp-probe under it on the host. */
#include "lib/err.h"
#include "runtime/runtime_seccomp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: seccomp-apply PROGRAM [ARG...]\n");
		return 2;
	}
	struct err why;
	if (runtime_seccomp_build(&why) != 0) {
		fprintf(stderr, "seccomp-apply: %s\n", why.msg);
		return 125;
	}
	if (runtime_seccomp_apply() != 0) {
		fprintf(stderr, "seccomp-apply: %s\n", strerror(errno));
		return 125;
	}
	execv(argv[1], argv + 1);
	fprintf(stderr, "seccomp-apply: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
