/* envd/fs/ — envd's file side: the filesystem.Filesystem service and the
 * plain-HTTP /files routes.
 * Owns: the unary RPCs (fs_rpc.c), directory listing and removal in slices
 * (fs_list.c, fs_remove.c), watchers (fs_watch.c), EntryInfo (fs_entry.c),
 * paths resolved inside a sandbox's root (fs_path.c), and GET/POST /files
 * with their shared prelude and signature check (fs_files*.c).
 * May call: registry/ (is the sandbox still there?), runtime/ (its root,
 * its accounts), http/, lib/. Never envd/process/ nor envd/ above it.
 *
 * This file: Stat, ListDir, MakeDir, Move and Remove
 * (docs/e2b-protocol-notes.md, "Filesystem service"). Every path is
 * resolved inside the sandbox's root (fs_path.h) after envd's ~ / home
 * expansion for the Basic-auth user (by default the sandbox's default user,
 * an empty path its default workdir); the watcher RPCs are in fs_watch.h. */
#ifndef E2B_BACKEND_FILESYSTEM_RPC_H
#define E2B_BACKEND_FILESYSTEM_RPC_H

#include "envd/fs/fs_ctx.h"

#include <stddef.h>

struct err;
struct fs_user;

int fs_rpc_stat(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_rpc_list_dir(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_rpc_make_dir(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_rpc_move(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);
int fs_rpc_remove(struct fs_ctx *ctx, struct evhttp_request *req, struct sandbox *sb);

/* Shared with the watcher RPCs: the Basic-auth user or the default one
 * (unauthenticated "invalid username" / "invalid default user" when the
 * sandbox has no such account) and a request
 * path expanded for it (invalid_argument when it cannot be). 0 or -1. */
int fs_rpc_user(struct evhttp_request *req, const struct sandbox *sb, struct fs_user *u, struct err *err);
int fs_rpc_path(const char *raw, const struct fs_user *u, char *out, size_t cap, struct err *err);
/* Go's lowercase text for an errno ("no such file or directory"). */
const char *fs_rpc_errno_text(int e, char *buf, size_t cap);

#endif
