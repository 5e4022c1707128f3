/* Small control files (a cgroup's, a process's uid_map): writing one whole,
 * reading one whole; and sleeping, which every file of runtime/ may need.
 * The lowest file of runtime/; calls only the kernel. */
#ifndef E2B_BACKEND_RUNTIME_CONTROL_H
#define E2B_BACKEND_RUNTIME_CONTROL_H

#include <stddef.h>

void runtime_sleep_ms(long ms);
/* Writes text to dir/file in one write (retried on EINTR). 0 ok, -1 with errno. */
int runtime_write_at(const char *dir, const char *file, const char *text);
/* Reads dir/file whole into buf (NUL-terminated, cut at size - 1). 0 ok,
 * -1 with errno. */
int runtime_read_at(const char *dir, const char *file, char *buf, size_t size);

#endif
