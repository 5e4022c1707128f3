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
 * ACLs are not copied. Never follows a symbolic link of the source. The
 * same walk merges a layer over others (squashing a stack, store_squash.h).
 * Blocks: meant for a forked helper (store_helper.h). Calls lib/ (removing
 * what a merged layer replaces) and the kernel. */
#ifndef E2B_BACKEND_STORE_SHIFT_H
#define E2B_BACKEND_STORE_SHIFT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct err;

#define STORE_SHIFT_MAX_DEPTH 512 /* deeper trees are refused (each level holds two descriptors) */

/* Creates dst (must not exist) as a copy of the directory src with host ids
 * base..base+count-1 shifted down by base. *bytes: the sizes of the regular
 * files and symbolic links copied. 0 ok, -1 with err filled in (dst may be
 * left half-made: the caller removes it). */
int store_shift_copy(const char *src, const char *dst, uid_t base, unsigned long count, uint64_t *bytes,
	struct err *err);

/* Merges the layer tree src into dst (made when missing) as an overlay
 * stacks it over the layers merged there before: what src has at a name
 * replaces what dst has (a directory's entries merge, unless src's is
 * opaque), a whiteout removes it. bottom is the tree dst will be stacked
 * on (the stack's bottom layer, only looked into): a whiteout stays, and an
 * opaque directory (one of src's, or a directory replacing what hid
 * bottom's) stays opaque, only where bottom has something to hide. Ids are
 * kept as they are (layers have canonical ids). Blocks. 0 ok, -1 with err
 * (dst may be half-merged: the caller removes it). */
int store_shift_merge(const char *src, const char *dst, const char *bottom, struct err *err);

#endif
