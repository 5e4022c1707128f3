/* Copying a sandbox's writable layer (an overlay upper directory whose files
 * carry the sandbox's host ids, base + X) into a layer's tree with canonical
 * ids (X, as seen inside a sandbox). Kept: regular files, directories,
 * symbolic links, hard links (as hard links), FIFOs, overlay whiteouts
 * (character devices 0:0), opaque directories (trusted.overlay.opaque, or
 * user.overlay.opaque of a rootless upper, both written as
 * trusted.overlay.opaque), modes with setuid/setgid/sticky, timestamps,
 * user.* xattrs and file capabilities (security.capability, its root id
 * shifted too). Dropped, with a line on stderr: other device nodes, sockets,
 * ids outside the range (they become 65534), and overlay's bookkeeping
 * xattrs (origin, impure, redirect) that mean nothing in another overlay;
 * ACLs are not copied. Never follows a symbolic link of the source. Blocks:
 * meant for a forked helper (store_helper.h). Calls only the kernel. */
#ifndef E2B_BACKEND_STORE_SHIFT_H
#define E2B_BACKEND_STORE_SHIFT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STORE_SHIFT_MAX_DEPTH 512 /* deeper trees are refused (each level holds two descriptors) */

/* Creates dst (must not exist) as a copy of the directory src with host ids
 * base..base+count-1 shifted down by base. *bytes: the sizes of the regular
 * files and symbolic links copied. 0 ok, -1 with why filled in (dst may be
 * left half-made: the caller removes it). */
int store_shift_copy(const char *src, const char *dst, uid_t base, unsigned long count,
	uint64_t *bytes, char *why, size_t why_len);

#endif
