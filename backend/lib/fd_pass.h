/* A message with descriptors (SCM_RIGHTS) sent on a socket, as both ends of
 * lib/init_wire.h send theirs. Calls the kernel only: the sandbox's init, a
 * static program of its own, links it too. */
#ifndef E2B_BACKEND_FD_PASS_H
#define E2B_BACKEND_FD_PASS_H

#include <stddef.h>
#include <sys/types.h>

/* At most this many descriptors in one message (the kernel's SCM_MAX_FD). */
#define FD_PASS_MAX 253

/* sendmsg of len bytes at msg with nfds descriptors and flags (with
 * MSG_NOSIGNAL: a peer gone is EPIPE, not SIGPIPE), again after EINTR. The
 * bytes sent, or -1 with errno (EINVAL for more than FD_PASS_MAX). */
ssize_t fd_pass_send(int fd, void *msg, size_t len, const int *fds, size_t nfds, int flags);

#endif
