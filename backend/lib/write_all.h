/* Writing a whole buffer to a blocking descriptor (see write_all.c). */
#ifndef E2B_BACKEND_WRITE_ALL_H
#define E2B_BACKEND_WRITE_ALL_H

#include <stddef.h>

/* Writes all len bytes, again after EINTR and short writes. 0 ok, -1 with
 * errno (a write of 0 bytes counts as a failure). */
int write_all(int fd, const void *buf, size_t len);

#endif
