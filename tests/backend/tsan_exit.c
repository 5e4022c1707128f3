/* Linked into the ThreadSanitizer copy of the backend only (make
 * backend-tsan, -Wl,--wrap=_exit): TSan's _exit flushes stdio first, and a
 * child the worker thread forks may find stderr's lock held for good by the
 * loop's log line at the moment of the fork, so the child and the worker,
 * which waits for it, would hang. Here _exit is the system call, as in the
 * normal build. */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noreturn)) void __wrap__exit(int status);

void __wrap__exit(int status)
{
	for (;;)
		syscall(SYS_exit_group, status);
}
