/* Sending descriptors (fd_pass.h). */
#define _GNU_SOURCE
#include "lib/fd_pass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

ssize_t fd_pass_send(int fd, void *msg, size_t len, const int *fds, size_t nfds, int flags)
{
	union {
		char buf[CMSG_SPACE(FD_PASS_MAX * sizeof(int))];
		struct cmsghdr align;
	} control;
	if (nfds > FD_PASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct iovec iov = {.iov_base = msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	ssize_t n;
	while ((n = sendmsg(fd, &mh, flags | MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return n;
}
