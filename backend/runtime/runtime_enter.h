/* Reaching into a sandbox: the host path of its "/", files opened beneath
 * it, sockets in its network namespace, whether its init lives. (Its
 * commands are started by its init: runtime_spawn.h.) Valid while the
 * sandbox exists (until its `removing` hook). Calls the runtime's state and
 * the kernel. */
#ifndef E2B_BACKEND_RUNTIME_ENTER_H
#define E2B_BACKEND_RUNTIME_ENTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox;
struct sandbox_user;

/* Absolute host path of the directory that is "/" for the sandbox's commands
 * (the overlay's merged directory). Valid while sb exists (until its
 * `removing` hook). With --isolation none it is "/": commands see the host's
 * root, and their home is sb->dir. */
const char *runtime_rootfs(const struct sandbox *sb);
/* socket(2) created inside the sandbox's network namespace (the host's when
 * isolation is none); -1 with errno. Used by the port proxy to connect to
 * 127.0.0.1:<port> as the sandbox sees it. The socket is close-on-exec. */
int runtime_socket(const struct sandbox *sb, int domain, int type, int protocol);
/* fn(arg) run on a thread of its own inside the sandbox's network namespace
 * (an nftables table of the sandbox's own, say), waited for; its result,
 * with errno. -1 with ENOTSUP without isolation. */
int runtime_in_netns(const struct sandbox *sb, int (*fn)(void *arg), void *arg);
/* open(2) of path beneath the sandbox's root (openat2 RESOLVE_IN_ROOT):
 * "..", absolute symbolic links and absolute paths all stay inside it.
 * Isolated sandboxes only. */
int runtime_open_in_root(const struct sandbox *sb, const char *path, int flags);
/* Whether path (absolute, inside the sandbox) is an existing directory there:
 * 1 directory, 0 exists but not a directory, -1 missing (errno). */
int runtime_path_is_dir(const struct sandbox *sb, const char *path);
/* False once a started sandbox's init has ended (killed from outside, or
 * for memory), taking every process of the sandbox with it: it can run
 * nothing more. True without isolation and for one never started. */
bool runtime_sandbox_alive(const struct sandbox *sb);
/* The started init's pidfd, readable once the init has ended (the caller
 * polls it, never closes it: the runtime closes it when it stops or removes
 * the sandbox); -1 without isolation and while the sandbox is cold. */
int runtime_sandbox_init_fd(const struct sandbox *sb);
/* The pid the sandbox's own /proc shows for a host pid (itself when not isolated). */
pid_t runtime_ns_pid(const struct sandbox *sb, pid_t host_pid);

#endif
