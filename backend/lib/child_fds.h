/* The descriptors of a forked helper (the disk pool's
 * helper, the store's helpers). */
#ifndef E2B_BACKEND_CHILD_FDS_H
#define E2B_BACKEND_CHILD_FDS_H

/* In a forked child: fd becomes 3, every other descriptor above 2 is closed
 * (the state directory's lock included), stdin and stdout become /dev/null
 * (stderr stays the backend's log). Not the backend's stdout: whoever reads
 * its ready line must see the end of it when the backend exits, even if a
 * child is still busy. -1 when fd could not be moved. */
int child_fds(int fd);

#endif
