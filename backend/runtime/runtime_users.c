/* The accounts of a sandbox (runtime_users.h): its own /etc/passwd and
 * /etc/group, read beneath its root, never the host's NSS. */
#define _GNU_SOURCE
#include "runtime/runtime_users.h"

#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_state.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OVERFLOW_ID 65534 /* the kernel's nobody: what an unmapped id shows as */

uid_t runtime_host_id(const struct sandbox *sb, uid_t id)
{
	if (!sb->rt)
		return id;
	const struct runtime_ids *ids = &sb->rt->ids;
	if (id >= ids->count)
		id = ids->count > OVERFLOW_ID ? OVERFLOW_ID : 0;
	return ids->base + id;
}

uid_t runtime_sandbox_id(const struct sandbox *sb, uid_t host_id)
{
	if (!sb->rt)
		return host_id;
	const struct runtime_ids *ids = &sb->rt->ids;
	if (host_id < ids->base || host_id - ids->base >= ids->count)
		return OVERFLOW_ID;
	return host_id - ids->base;
}

/* The whole of a small file beneath the root; NULL when missing or too big. */
static char *read_account_file(const struct sandbox *sb, const char *path)
{
	int fd = runtime_open_in_root(sb, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < RUNTIME_ACCOUNT_FILE_MAX)
		buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (buf)
		buf[got] = '\0';
	close(fd);
	return buf;
}

/* Splits one line of a colon-separated account file into at most max fields
 * (in place); returns the number of fields. */
static int split_fields(char *line, char **fields, int max)
{
	int n = 0;
	fields[n++] = line;
	for (char *p = line; *p && n < max; p++) {
		if (*p == ':') {
			*p = '\0';
			fields[n++] = p + 1;
		}
	}
	return n;
}

static bool parse_id(const char *text, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v > 0xfffffffeUL)
		return false;
	*out = (unsigned)v;
	return true;
}

/* Calls match on every well-formed line (fields split) until it returns true. */
static bool scan_accounts(const struct sandbox *sb, const char *path, int nfields,
	bool (*match)(char **f, void *arg), void *arg)
{
	char *text = read_account_file(sb, path);
	if (!text)
		return false;
	bool found = false;
	for (char *line = text, *next; line && *line && !found; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *f[8];
		if (split_fields(line, f, nfields) == nfields)
			found = match(f, arg);
	}
	free(text);
	return found;
}

struct user_query {
	const char *name; /* by name, or */
	uid_t uid;        /* by uid */
	struct sandbox_user *out;
};

static bool match_user(char **f, void *arg)
{
	struct user_query *q = arg;
	unsigned uid, gid;
	if (!parse_id(f[2], &uid) || !parse_id(f[3], &gid))
		return false;
	if (q->name ? strcmp(f[0], q->name) != 0 : uid != q->uid)
		return false;
	if (strlen(f[0]) >= sizeof q->out->name || strlen(f[5]) >= sizeof q->out->home)
		return false;
	q->out->uid = uid;
	q->out->gid = gid;
	strcpy(q->out->name, f[0]);
	strcpy(q->out->home, f[5][0] ? f[5] : "/");
	return true;
}

struct group_query {
	const char *name; /* by name, or */
	gid_t gid;        /* by gid; */
	gid_t *gid_out;
	char *name_out;
	size_t name_len;
	struct sandbox_user *member; /* or: collect the groups this user is in */
};

static bool match_group(char **f, void *arg)
{
	struct group_query *q = arg;
	unsigned gid;
	if (!parse_id(f[2], &gid))
		return false;
	if (q->member) {
		struct sandbox_user *u = q->member;
		if (gid == u->gid || u->ngroups >= (int)(sizeof u->groups / sizeof u->groups[0]))
			return false;
		for (char *m = f[3], *next; m && *m; m = next) {
			next = strchr(m, ',');
			if (next)
				*next++ = '\0';
			if (strcmp(m, u->name) == 0) {
				u->groups[u->ngroups++] = gid;
				break;
			}
		}
		return false; /* keep scanning */
	}
	if (q->name ? strcmp(f[0], q->name) != 0 : gid != q->gid)
		return false;
	if (q->gid_out)
		*q->gid_out = gid;
	if (q->name_out) {
		if (strlen(f[0]) >= q->name_len)
			return false;
		strcpy(q->name_out, f[0]);
	}
	return true;
}

/* Without isolation every name the backend accepts is the backend's own user. */
static int host_user(const struct sandbox *sb, struct sandbox_user *u)
{
	memset(u, 0, sizeof *u);
	u->uid = geteuid();
	u->gid = getegid();
	snprintf(u->home, sizeof u->home, "%s", sb->dir);
	return 0;
}

int runtime_user_resolve(const struct sandbox *sb, const char *name, struct sandbox_user *u)
{
	if (!sb->rt)
		return host_user(sb, u);
	memset(u, 0, sizeof *u);
	struct user_query q = {.name = name, .out = u};
	if (!scan_accounts(sb, "/etc/passwd", 7, match_user, &q))
		return -1;
	u->groups[u->ngroups++] = u->gid;
	struct group_query g = {.member = u};
	scan_accounts(sb, "/etc/group", 4, match_group, &g);
	return 0;
}

int runtime_user_by_name(const struct sandbox *sb, const char *name, uid_t *uid, gid_t *gid, char *home,
	size_t home_len)
{
	struct sandbox_user u;
	if (runtime_user_resolve(sb, name, &u) != 0 || strlen(u.home) >= home_len)
		return -1;
	*uid = u.uid;
	*gid = u.gid;
	strcpy(home, u.home);
	return 0;
}

int runtime_user_name(const struct sandbox *sb, uid_t uid, char *buf, size_t len)
{
	struct sandbox_user u;
	if (!sb->rt)
		return -1;
	struct user_query q = {.uid = uid, .out = &u};
	if (!scan_accounts(sb, "/etc/passwd", 7, match_user, &q) || strlen(u.name) >= len)
		return -1;
	strcpy(buf, u.name);
	return 0;
}

int runtime_group_by_name(const struct sandbox *sb, const char *name, gid_t *gid)
{
	if (!sb->rt)
		return -1;
	struct group_query q = {.name = name, .gid_out = gid};
	return scan_accounts(sb, "/etc/group", 4, match_group, &q) ? 0 : -1;
}

int runtime_group_name(const struct sandbox *sb, gid_t gid, char *buf, size_t len)
{
	if (!sb->rt)
		return -1;
	struct group_query q = {.gid = gid, .name_out = buf, .name_len = len};
	return scan_accounts(sb, "/etc/group", 4, match_group, &q) ? 0 : -1;
}

struct each_query {
	void (*each)(const char *name, unsigned id, void *arg);
	void *arg;
};

static bool each_entry(char **f, void *arg)
{
	struct each_query *q = arg;
	unsigned id;
	if (parse_id(f[2], &id))
		q->each(f[0], id, q->arg);
	return false; /* every line */
}

int runtime_accounts_each(const struct sandbox *sb, bool group,
	void (*each)(const char *name, unsigned id, void *arg), void *arg)
{
	if (!sb->rt)
		return -1;
	struct each_query q = {.each = each, .arg = arg};
	scan_accounts(sb, group ? "/etc/group" : "/etc/passwd", group ? 4 : 7, each_entry, &q);
	return 0;
}
