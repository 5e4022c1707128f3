/* TEMPORARY stand-in for the sandbox runtime (sandbox_runtime.h) until the
 * runtime branch lands; the lead deletes this file at merge.
 *
 * The root filesystem is <sandbox dir>/rootfs, made on first use with an
 * etc/passwd and etc/group holding root (0) and user (1000, home
 * /home/user). Sockets are plain host sockets. Accounts are parsed from the
 * rootfs's own files. */
#include "sandbox_runtime.h"

#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *passwd_text =
	"root:x:0:0:root:/root:/bin/bash\n"
	"user:x:1000:1000::/home/user:/bin/bash\n";
static const char *group_text = "root:x:0:\nuser:x:1000:\n";

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "wx");
	if (!f)
		return errno == EEXIST ? 0 : -1;
	fputs(text, f);
	return fclose(f);
}

static void make_dir(const char *root, const char *rel, uid_t uid, mode_t mode)
{
	char p[4200];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (mkdir(p, mode) == 0 && (chmod(p, mode) != 0 || chown(p, uid, uid) != 0))
		return;
}

const char *sandbox_rootfs(const struct sandbox *sb)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s/rootfs", sb->dir);
	struct stat st;
	if (stat(path, &st) != 0) {
		mkdir(path, 0755);
		make_dir(path, "etc", 0, 0755);
		make_dir(path, "tmp", 0, 01777);
		make_dir(path, "root", 0, 0700);
		make_dir(path, "home", 0, 0755);
		make_dir(path, "home/user", 1000, 0755);
		char p[4200];
		snprintf(p, sizeof p, "%s/etc/passwd", path);
		write_file(p, passwd_text);
		snprintf(p, sizeof p, "%s/etc/group", path);
		write_file(p, group_text);
	}
	return path;
}

int sandbox_socket(const struct sandbox *sb, int domain, int type, int protocol)
{
	(void)sb;
	return socket(domain, type, protocol);
}

/* Field i (0-based) of the first line whose field key_field equals key. */
static int lookup(const struct sandbox *sb, const char *file, int key_field, const char *key,
	char fields[7][512])
{
	char p[4200];
	snprintf(p, sizeof p, "%s/etc/%s", sandbox_rootfs(sb), file);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	char line[2048];
	int rc = -1;
	while (rc != 0 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *s = line;
		for (int i = 0; i < 7; i++) {
			size_t n = strcspn(s, ":");
			snprintf(fields[i], 512, "%.*s", (int)n, s);
			s += n;
			if (*s)
				s++;
		}
		if (strcmp(fields[key_field], key) == 0)
			rc = 0;
	}
	fclose(f);
	return rc;
}

int sandbox_user_by_name(const struct sandbox *sb, const char *name, uid_t *uid, gid_t *gid,
	char *home, size_t home_len)
{
	char f[7][512];
	if (!*name || lookup(sb, "passwd", 0, name, f) != 0)
		return -1;
	*uid = (uid_t)strtoul(f[2], NULL, 10);
	*gid = (gid_t)strtoul(f[3], NULL, 10);
	snprintf(home, home_len, "%s", f[5]);
	return 0;
}

int sandbox_user_name(const struct sandbox *sb, uid_t uid, char *buf, size_t len)
{
	char f[7][512], key[32];
	snprintf(key, sizeof key, "%u", (unsigned)uid);
	if (lookup(sb, "passwd", 2, key, f) != 0)
		return -1;
	snprintf(buf, len, "%s", f[0]);
	return 0;
}

int sandbox_group_by_name(const struct sandbox *sb, const char *name, gid_t *gid)
{
	char f[7][512];
	if (!*name || lookup(sb, "group", 0, name, f) != 0)
		return -1;
	*gid = (gid_t)strtoul(f[2], NULL, 10);
	return 0;
}

int sandbox_group_name(const struct sandbox *sb, gid_t gid, char *buf, size_t len)
{
	char f[7][512], key[32];
	snprintf(key, sizeof key, "%u", (unsigned)gid);
	if (lookup(sb, "group", 2, key, f) != 0)
		return -1;
	snprintf(buf, len, "%s", f[0]);
	return 0;
}
