/* Unpredictable identifiers from getrandom(2), falling back to /dev/urandom. */
#include "lib/random.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

static int read_urandom(unsigned char *p, size_t len)
{
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	close(fd);
	return 0;
}

int random_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;
	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return read_urandom(p, len); /* e.g. ENOSYS in an old sandbox */
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int random_lower_alnum(char *out, size_t len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t filled = 0;
	while (filled < len) {
		unsigned char pool[64];
		if (random_bytes(pool, sizeof pool) != 0)
			return -1;
		for (size_t i = 0; i < sizeof pool && filled < len; i++) {
			/* 252 = 7 * 36: rejecting the top 4 values keeps every
			 * character equally likely. */
			if (pool[i] < 252)
				out[filled++] = alphabet[pool[i] % 36];
		}
	}
	out[len] = '\0';
	return 0;
}

int random_hex(char *out, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char pool[64];
	size_t filled = 0;
	while (filled < len) {
		if (random_bytes(pool, sizeof pool) != 0)
			return -1;
		for (size_t i = 0; i < sizeof pool && filled < len; i++)
			out[filled++] = digits[pool[i] & 0x0f];
	}
	out[len] = '\0';
	return 0;
}
