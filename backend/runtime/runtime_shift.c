/* Moving files to another id range (runtime_shift.h). */
#define _GNU_SOURCE
#include "runtime/runtime_shift.h"

#include <errno.h>
#include <ftw.h>
#include <unistd.h>

static const struct runtime_ids *target;

static int shift_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)type;
	(void)ftw;
	uid_t uid = runtime_ids_rebase(st->st_uid, target);
	gid_t gid = (gid_t)runtime_ids_rebase((uid_t)st->st_gid, target);
	if ((uid != st->st_uid || gid != st->st_gid) && lchown(path, uid, gid) != 0)
		return -1;
	/* chown drops setuid/setgid bits: give them back (not through a link). */
	if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)) &&
		chmod(path, st->st_mode & 07777) != 0)
		return -1;
	return 0;
}

int runtime_shift_ids(const char *dir, const struct runtime_ids *to)
{
	target = to;
	int rc = nftw(dir, shift_one, 64, FTW_PHYS | FTW_MOUNT);
	target = NULL;
	if (rc > 0)
		errno = EIO;
	return rc == 0 ? 0 : -1;
}
