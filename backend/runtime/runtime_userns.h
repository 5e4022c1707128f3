/* User namespaces and idmapped mounts: writing a process's id maps, making
 * a namespace that only carries a map (for mount_setattr), and mounting a
 * template's root filesystem as a sandbox's lower layer through such a map.
 * Calls runtime_control.c (writing a control file). */
#ifndef E2B_BACKEND_RUNTIME_USERNS_H
#define E2B_BACKEND_RUNTIME_USERNS_H

#include <sys/types.h>

/* Writes "0 uid_base count" to /proc/<pid>/uid_map and "0 gid_base count"
 * to its gid_map. 0 or -1 (errno). */
int runtime_userns_write_maps(pid_t pid, uid_t uid_base, gid_t gid_base, unsigned long count);
/* A new user namespace mapping ids 0..count-1 onto uid_base.. and
 * gid_base..: its descriptor (close-on-exec), or -1 with errno. Made by a
 * short-lived child. */
int runtime_userns_new(uid_t uid_base, gid_t gid_base, unsigned long count);
/* Mounts source (a directory) read-only at target, relative to dir_fd: an
 * idmapped mount through userns_fd, or a plain bind when userns_fd < 0. */
int runtime_userns_mount_lower(const char *source, int userns_fd, int dir_fd, const char *target);

#endif
