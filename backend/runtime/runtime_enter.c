/* Entering a sandbox: its users (its own /etc/passwd and /etc/group, read
 * beneath its root), paths resolved beneath its root, sockets in its network
 * namespace, and the steps a forked child takes to become a process of the
 * sandbox (cgroups, namespaces, capabilities, user). */
#define _GNU_SOURCE
#include "runtime/runtime_internal.h"

#include "registry/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ACCOUNT_FILE_MAX (1024 * 1024)

const char *sandbox_rootfs(const struct sandbox *sb)
{
	return sb->rt ? sb->rt->rootfs : "/";
}

/* Opens path beneath the sandbox's root: "..", absolute symbolic links and
 * absolute paths all stay inside it. */
static int open_in_root(const struct sandbox *sb, const char *path, int flags)
{
	struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, sb->rt->root_fd, path, &how, sizeof how);
}

int sandbox_path_is_dir(const struct sandbox *sb, const char *path)
{
	struct stat st;
	if (!sb->rt) {
		if (stat(path, &st) != 0)
			return -1;
		return S_ISDIR(st.st_mode) ? 1 : 0;
	}
	int fd = open_in_root(sb, path, O_PATH);
	if (fd < 0)
		return -1;
	int rc = fstat(fd, &st) == 0 ? (S_ISDIR(st.st_mode) ? 1 : 0) : -1;
	close(fd);
	return rc;
}

/* The whole of a small file beneath the root; NULL when missing or too big. */
static char *read_account_file(const struct sandbox *sb, const char *path)
{
	int fd = open_in_root(sb, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < ACCOUNT_FILE_MAX)
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

int sandbox_user_resolve(const struct sandbox *sb, const char *name, struct sandbox_user *u)
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

int sandbox_user_by_name(const struct sandbox *sb, const char *name, uid_t *uid, gid_t *gid,
	char *home, size_t home_len)
{
	struct sandbox_user u;
	if (sandbox_user_resolve(sb, name, &u) != 0 || strlen(u.home) >= home_len)
		return -1;
	*uid = u.uid;
	*gid = u.gid;
	strcpy(home, u.home);
	return 0;
}

int sandbox_user_name(const struct sandbox *sb, uid_t uid, char *buf, size_t len)
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

int sandbox_group_by_name(const struct sandbox *sb, const char *name, gid_t *gid)
{
	if (!sb->rt)
		return -1;
	struct group_query q = {.name = name, .gid_out = gid};
	return scan_accounts(sb, "/etc/group", 4, match_group, &q) ? 0 : -1;
}

int sandbox_group_name(const struct sandbox *sb, gid_t gid, char *buf, size_t len)
{
	if (!sb->rt)
		return -1;
	struct group_query q = {.gid = gid, .name_out = buf, .name_len = len};
	return scan_accounts(sb, "/etc/group", 4, match_group, &q) ? 0 : -1;
}

static int open_ns(pid_t pid, const char *ns)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, ns);
	return open(path, O_RDONLY | O_CLOEXEC);
}

int sandbox_socket(const struct sandbox *sb, int domain, int type, int protocol)
{
	if (!sb->rt)
		return socket(domain, type | SOCK_CLOEXEC, protocol);
	int ns = open_ns(sb->rt->init_pid, "net");
	if (ns < 0)
		return -1;
	if (setns(ns, CLONE_NEWNET) != 0) {
		int e = errno;
		close(ns);
		errno = e;
		return -1;
	}
	close(ns);
	/* A socket belongs to the namespace it was made in, for good. */
	int s = socket(domain, type | SOCK_CLOEXEC, protocol);
	int e = errno;
	if (setns(rt_g.self_net_ns, CLONE_NEWNET) != 0) {
		/* The backend must never stay in a sandbox's network. */
		fprintf(stderr, "e2b-local-backend: cannot return to its own network namespace\n");
		abort();
	}
	errno = e;
	return s;
}

int runtime_fork_enter(const struct sandbox *sb)
{
	if (!sb->rt)
		return 0;
	int ns = open_ns(sb->rt->init_pid, "pid");
	if (ns < 0)
		return -1;
	int rc = setns(ns, CLONE_NEWPID);
	int e = errno;
	close(ns);
	errno = e;
	return rc;
}

void runtime_fork_leave(const struct sandbox *sb, pid_t child)
{
	if (!sb->rt)
		return;
	/* The child joins its cgroups itself before exec; doing it here too
	 * means it is in them before anyone hears of it (the start event). */
	if (child > 0) {
		char text[24];
		int n = snprintf(text, sizeof text, "%d", (int)child);
		for (int i = 0; i < RT_NCTRL; i++)
			if (write(sb->rt->procs_fd[i], text, (size_t)n) != n && errno != ESRCH)
				fprintf(stderr, "e2b-local-backend: cgroup %s: %s\n", rt_controllers[i], strerror(errno));
	}
	if (setns(rt_g.self_pid_ns, CLONE_NEWPID) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot return to its own pid namespace\n");
		abort();
	}
}

/* Docker's default capability set without CAP_MKNOD (there is no device
 * cgroup here): enough for sudo, chown, binding low ports; not enough to
 * mount, load modules, trace or reach raw devices. */
static bool cap_kept(int cap)
{
	switch (cap) {
	case CAP_CHOWN: case CAP_DAC_OVERRIDE: case CAP_FOWNER: case CAP_FSETID: case CAP_KILL:
	case CAP_SETGID: case CAP_SETUID: case CAP_SETPCAP: case CAP_NET_BIND_SERVICE:
	case CAP_NET_RAW: case CAP_SYS_CHROOT: case CAP_AUDIT_WRITE: case CAP_SETFCAP:
		return true;
	default:
		return false;
	}
}

int runtime_child_enter(const struct sandbox *sb, const struct sandbox_user *u)
{
	struct sandbox_rt *rt = sb->rt;
	if (!rt)
		return 0;
	for (int i = 0; i < RT_NCTRL; i++)
		if (write(rt->procs_fd[i], "0", 1) != 1)
			return -1;
	/* Open them all first: once in the sandbox's mount namespace, /proc is its own. */
	static const char *const names[] = {"uts", "ipc", "net", "mnt"};
	static const int types[] = {CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS};
	int fds[4];
	for (int i = 0; i < 4; i++) {
		fds[i] = open_ns(rt->init_pid, names[i]);
		if (fds[i] < 0)
			return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (setns(fds[i], types[i]) != 0)
			return -1;
		close(fds[i]);
	}
	if (chdir("/") != 0)
		return -1;
	for (int cap = 0; cap <= 63; cap++) {
		if (cap_kept(cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
			return -1;
	}
	if (setgroups((size_t)u->ngroups, u->groups) != 0 || setgid(u->gid) != 0 ||
	    setuid(u->uid) != 0)
		return -1;
	return 0;
}

pid_t runtime_ns_pid(const struct sandbox *sb, pid_t host_pid)
{
	if (!sb || !sb->rt)
		return host_pid;
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)host_pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return host_pid;
	pid_t ns_pid = host_pid;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		char *last = strrchr(line, '\t');
		if (last)
			ns_pid = (pid_t)atoi(last + 1);
		break;
	}
	fclose(f);
	return ns_pid;
}
