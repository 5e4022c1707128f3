/* The accounts of a sandbox: its own /etc/passwd and /etc/group, read
 * beneath its root (never the host's NSS), and its ids as the backend's own
 * file calls see them. Calls runtime_enter.c. */
#ifndef E2B_BACKEND_RUNTIME_USERS_H
#define E2B_BACKEND_RUNTIME_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox;

/* Accounts from the sandbox's own /etc/passwd and /etc/group (read inside its
 * root, symbolic links resolved within it). 0 ok, -1 unknown. With
 * --isolation none there are no accounts of the sandbox's own: by_name maps
 * any name to the backend's uid/gid with home sb->dir (which names envd
 * accepts is checked in process_rpc.c), and the other three answer -1. */
int runtime_user_by_name(const struct sandbox *sb, const char *name, uid_t *uid, gid_t *gid, char *home,
	size_t home_len);
int runtime_user_name(const struct sandbox *sb, uid_t uid, char *buf, size_t len);
int runtime_group_by_name(const struct sandbox *sb, const char *name, gid_t *gid);
int runtime_group_name(const struct sandbox *sb, gid_t gid, char *buf, size_t len);

/* Every well-formed entry of the sandbox's /etc/passwd (group false) or
 * /etc/group (group true), in file order: each(name, id, arg). One read of
 * the file (at most RUNTIME_ACCOUNT_FILE_MAX bytes; a larger one counts as
 * missing): a caller that names many ids builds its own table from it. -1
 * with isolation none (no accounts of the sandbox's own). */
#define RUNTIME_ACCOUNT_FILE_MAX (1024 * 1024)
int runtime_accounts_each(const struct sandbox *sb, bool group,
	void (*each)(const char *name, unsigned id, void *arg), void *arg);

/* A user resolved in the sandbox, as a process is spawned as (process_spawn.c). */
struct sandbox_user {
	uid_t uid;
	gid_t gid;
	gid_t groups[32];
	int ngroups;
	char name[64];
	char home[256];
};
int runtime_user_resolve(const struct sandbox *sb, const char *name, struct sandbox_user *u);

/* A sandbox runs in a user namespace of its own: its ids 0..65535 are other
 * ids outside it (docs/backend/runtime-and-isolation.md, "Ids"). Whatever the backend reads
 * (st_uid, st_gid) or sets (fchown) on a sandbox's files from outside goes
 * through these. host_id: the id the backend's calls use for sandbox id id
 * (an id the sandbox cannot have becomes its nobody, 65534); sandbox_id: the
 * id the sandbox sees for host_id (65534 when it is none of the sandbox's).
 * The same map holds for uids and gids. Without isolation both are the
 * identity. */
uid_t runtime_host_id(const struct sandbox *sb, uid_t id);
uid_t runtime_sandbox_id(const struct sandbox *sb, uid_t host_id);

#endif
