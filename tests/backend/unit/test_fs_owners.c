/* envd/fs/fs_owners.c without accounts (a sandbox with no runtime, as under
 * isolation none, or a root without /etc/passwd and /etc/group): empty
 * tables, every name its number. Under UBSan the old code sorted the
 * empty tables' NULL arrays. */
#include "check.h"
#include "envd/fs/fs_owners.h"
#include "registry/registry.h"
#include "suites.h"

#include <string.h>

static void without_accounts(void)
{
	struct sandbox sb;
	memset(&sb, 0, sizeof sb);
	struct fs_owners *o = fs_owners_load(&sb);
	CHECK(o != NULL);
	if (!o)
		return;
	char name[16];
	fs_owners_user(o, 0, name, sizeof name);
	CHECK_STR(name, "0");
	fs_owners_group(o, 1000, name, sizeof name);
	CHECK_STR(name, "1000");
	fs_owners_free(o);
}

void suite_fs_owners(void)
{
	without_accounts();
}
