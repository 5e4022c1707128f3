/* TCP over loopback for the unit tests of the egress proxy's relays: a
 * connected pair of sockets, and a byte pattern whose every byte depends on
 * its offset, so a relay that loses, doubles or reorders bytes is caught. */
#ifndef E2B_BACKEND_UNIT_LOOPBACK_H
#define E2B_BACKEND_UNIT_LOOPBACK_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

static inline uint8_t pattern(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13);
}

/* A connected pair of TCP sockets on loopback: *a the connecting end, *b the accepted one. */
static inline int tcp_pair(int *a, int *b)
{
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof addr;
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(l, 1) != 0 ||
		getsockname(l, (struct sockaddr *)&addr, &len) != 0) {
		close(l);
		return -1;
	}
	*a = socket(AF_INET, SOCK_STREAM, 0);
	int rc = *a >= 0 && connect(*a, (struct sockaddr *)&addr, sizeof addr) == 0 ? 0 : -1;
	*b = rc == 0 ? accept(l, NULL, NULL) : -1;
	close(l);
	return *b >= 0 ? 0 : -1;
}

static inline void nonblocking(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

#endif
