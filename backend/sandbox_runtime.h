/* What the sandbox runtime provides to the rest of the backend: the host
 * path of a sandbox's root filesystem, sockets inside its network
 * namespace, and its own user and group accounts (names come from the
 * sandbox's /etc/passwd and /etc/group, never the host's). */
#ifndef E2B_BACKEND_SANDBOX_RUNTIME_H
#define E2B_BACKEND_SANDBOX_RUNTIME_H

#include <stddef.h>
#include <sys/types.h>

struct sandbox;

const char *sandbox_rootfs(const struct sandbox *sb); /* host path of the sandbox's "/" */
int sandbox_socket(const struct sandbox *sb, int domain, int type, int protocol); /* socket in its netns */
int sandbox_user_by_name(const struct sandbox *sb, const char *name, uid_t *uid, gid_t *gid, char *home, size_t home_len); /* 0 ok, -1 unknown */
int sandbox_user_name(const struct sandbox *sb, uid_t uid, char *buf, size_t len);
int sandbox_group_by_name(const struct sandbox *sb, const char *name, gid_t *gid);
int sandbox_group_name(const struct sandbox *sb, gid_t gid, char *buf, size_t len);

#endif
