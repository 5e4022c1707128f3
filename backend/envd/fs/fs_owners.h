/* The sandbox's account names by id, read once for a whole request (a
 * ListDir of many entries): /etc/passwd and /etc/group are the sandbox's
 * own, and its root may grow them to the 1 MiB bound, so reading them per
 * entry could let one listing hold the backend for a minute.
 * Calls runtime/runtime_users.c. */
#ifndef E2B_BACKEND_FS_OWNERS_H
#define E2B_BACKEND_FS_OWNERS_H

#include <stddef.h>
#include <sys/types.h>

struct sandbox;
struct fs_owners;

/* Both tables; NULL when out of memory. Without accounts (isolation none,
 * missing files) the tables are empty and every name is its number. */
struct fs_owners *fs_owners_load(const struct sandbox *sb);
void fs_owners_free(struct fs_owners *o);

/* The user (group) name of an id into buf, or its number when unknown. */
void fs_owners_user(const struct fs_owners *o, uid_t uid, char *buf, size_t cap);
void fs_owners_group(const struct fs_owners *o, gid_t gid, char *buf, size_t cap);

#endif
