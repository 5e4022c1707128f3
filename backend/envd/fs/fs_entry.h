/* filesystem.EntryInfo as envd writes it (docs/e2b-protocol-notes.md,
 * "Filesystem service"): the target's type and mode for a symlink plus
 * symlinkTarget, permissions in Go's FileMode.String() form, owner and group as
 * the sandbox's account names (the number when unknown), modifiedTime in RFC
 * 3339, size as an int64 string, enums by name, metadata from user.e2b.*
 * xattrs; protobuf-JSON defaults are omitted. */
#ifndef E2B_BACKEND_FS_ENTRY_H
#define E2B_BACKEND_FS_ENTRY_H

#include <stddef.h>
#include <sys/stat.h>

struct cJSON;
struct fs_owners;
struct sandbox;

#define FS_XATTR_PREFIX "user.e2b."

/* The entry at the absolute sandbox path (shown as given). The last
 * component is not followed for the lstat part. NULL with errno set when it
 * cannot be stat'ed (ENOENT for missing). owners: the account names read
 * once for a request of many entries (fs_owners.h); NULL reads them for
 * this one entry. */
struct cJSON *fs_entry_info(const struct sandbox *sb, int root_fd, const char *path,
	const struct fs_owners *owners);

/* Go's FileMode.String() for a stat mode. buf needs 16 bytes. */
void fs_mode_string(mode_t mode, char *buf);

/* "2026-01-02T03:04:05.123456789Z" (0, 3, 6 or 9 fraction digits). */
void fs_rfc3339(const struct timespec *ts, char *buf, size_t cap);

#endif
