/* Checkpoint and restore with CRIU (runtime_checkpoint.h). CRIU runs as a
 * child of the backend, in its mount namespace, where each sandbox's root
 * is mounted (restore takes it as --root). What lies outside a sandbox's
 * tree is named to CRIU: the init's two sockets to the backend (external
 * unix sockets, given back to a restored init as new sockets through
 * --inherit-fd, then swapped for sockets of its restored network
 * namespace) and the read-only bind mount of the init's binary (an
 * external mount, bound again from the backend's copy). */
#define _GNU_SOURCE
#include "runtime/runtime_checkpoint.h"

#include "lib/err.h"
#include "lib/init_wire.h"
#include "lib/tree_remove.h"
#include "runtime/runtime_checkpoint_ids.h"
#include "runtime/runtime_clone.h"
#include "runtime/runtime_remove.h"
#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_spawn.h"
#include "runtime/runtime_state.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where the init's binary is bound in every sandbox (sandbox_init.c). */
#define INIT_SELF_PATH "/dev/shm/.e2b-sandbox-init"
#define INIT_MOUNT_KEY "e2b-init"
#define SOCKETS_FILE "e2b-sockets" /* the init's socket inodes at the dump */
#define IDS_FILE "e2b-ids"         /* the id range's first id and size at the dump */

static struct {
	bool started, done;
	pid_t pid;
	int fd;         /* `criu check`'s output, until read */
	struct err why; /* status 0, "" when checkpoints work */
} probe = {.fd = -1};

void runtime_checkpoint_probe(void)
{
	if (probe.started)
		return;
	probe.started = true;
	if (runtime_self()->mode != ISOLATION_FULL) {
		err_set(&probe.why, 0,
			"the backend runs with %s isolation; a checkpoint "
			"needs full isolation (root)",
			runtime_isolation_name());
		probe.done = true;
		return;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		err_set(&probe.why, 0, "cannot run criu check: %s", strerror(errno));
		probe.done = true;
		return;
	}
	probe.pid = fork();
	if (probe.pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, 0) != 0 || dup2(p[1], 1) != 1 || dup2(p[1], 2) != 2)
			_exit(126);
		execl("/bin/sh", "sh", "-c", "criu check 2>&1; echo \"criu-rc=$?\"", (char *)NULL);
		_exit(126);
	}
	close(p[1]);
	if (probe.pid < 0) {
		close(p[0]);
		err_set(&probe.why, 0, "cannot run criu check: %s", strerror(errno));
		probe.done = true;
		return;
	}
	probe.fd = p[0];
}

/* The first line naming an error, else the last line, of CRIU's output. */
static void error_line(const char *text, char *out, size_t out_len)
{
	const char *pick = NULL, *last = NULL;
	for (const char *line = text; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
		if (*line == '\n')
			continue;
		last = line;
		char one[256];
		snprintf(one, sizeof one, "%.*s", (int)strcspn(line, "\n"), line);
		const char *at = strstr(one, "Error (");
		if (!pick && at)
			pick = line + (at - one);
	}
	if (!pick)
		pick = last ? last : "no output";
	size_t n = strcspn(pick, "\n");
	snprintf(out, out_len, "%.*s", (int)(n < 200 ? n : 200), pick);
}

/* Reads the probe's answer (waiting for it, the first time only). */
static void probe_finish(void)
{
	if (probe.done || !probe.started)
		return;
	probe.done = true;
	char text[8192];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof text - 1 &&
		((n = read(probe.fd, text + len, sizeof text - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	text[len] = 0;
	close(probe.fd);
	probe.fd = -1;
	char *rc = strstr(text, "criu-rc=");
	int code = rc ? atoi(rc + 8) : -1;
	if (rc)
		*rc = 0;
	if (code == 0)
		return; /* "Looks good." */
	if (code == 127) {
		err_set(&probe.why, 0, "criu is not installed");
		return;
	}
	char line[220];
	error_line(text, line, sizeof line);
	err_set(&probe.why, 0, "criu check fails on this kernel: %s", line);
}

int runtime_checkpoint_available(struct err *err)
{
	if (!probe.started)
		return err_set(err, 0, "not probed");
	probe_finish();
	return probe.why.msg[0] ? err_set(err, probe.why.status, "%s", probe.why.msg) : 0;
}

int runtime_checkpoint_allowed(const struct sandbox *sb, struct err *err)
{
	if (runtime_checkpoint_available(err) != 0)
		return -1;
	if (!sb->rt || sb->rt->init_pid <= 0 || sb->rt->req_fd < 0)
		return err_set(err, 0, "the sandbox has no running init");
	if (cJSON_GetArraySize(sb->volume_mounts) > 0)
		return err_set(err, 0, "a sandbox with volumes mounted is not checkpointed");
	return 0;
}

static void image_path(const struct sandbox *sb, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", sb->dir, name);
}

bool runtime_checkpoint_present(const struct sandbox *sb)
{
	char dir[4096], file[4200];
	image_path(sb, RUNTIME_CHECKPOINT_DIR, dir, sizeof dir);
	snprintf(file, sizeof file, "%s/" SOCKETS_FILE, dir);
	return access(file, F_OK) == 0;
}

void runtime_checkpoint_discard(const struct sandbox *sb)
{
	char path[4096];
	image_path(sb, RUNTIME_CHECKPOINT_TMP, path, sizeof path);
	tree_remove(path);
	image_path(sb, RUNTIME_CHECKPOINT_DIR, path, sizeof path);
	tree_remove(path);
}

/* Runs criu with argv and waits for it. In the child: cgroup (NULL: none)
 * joined first, keep[] left open (inherited by criu), every other
 * descriptor above 2 closed at exec. Its exit status, or -1. */
static int run_criu(char *const argv[], const struct runtime_cgroup *cg, const int *keep, size_t nkeep)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) != 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2)
			_exit(126);
		if (cg && cg->dir_fd >= 0) { /* v2: the restored tree is born in it */
			int procs = openat(cg->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
			if (procs < 0 || write(procs, "0", 1) != 1)
				_exit(125);
		} else if (cg && runtime_cgroup_join(cg) != 0) {
			_exit(125);
		}
		syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
		for (size_t i = 0; i < nkeep; i++)
			fcntl(keep[i], F_SETFD, 0);
		/* A session of its own: the backend's terminal is none of CRIU's. */
		setsid();
		execvp("criu", argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Why CRIU failed, from its log in dir, after what (status 0). Returns -1. */
static int criu_failure(const char *dir, const char *log, int rc, const char *what, struct err *err)
{
	char path[4200], text[65536];
	snprintf(path, sizeof path, "%s/%s", dir, log);
	text[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* Its end holds the error that stopped it. */
		off_t size = lseek(fd, 0, SEEK_END);
		off_t from = size > (off_t)sizeof text - 1 ? size - (off_t)sizeof text + 1 : 0;
		ssize_t n = pread(fd, text, sizeof text - 1, from);
		text[n > 0 ? n : 0] = 0;
		close(fd);
	}
	char line[220];
	if (text[0])
		error_line(text, line, sizeof line);
	else
		snprintf(line, sizeof line, "exit status %d", rc);
	return err_set(err, 0, "%s: %s", what, line);
}

/* The image's files are read by the restored tasks themselves once they
 * are in the sandbox's user namespace (as its root, the id range's first
 * id): theirs. The root task reads one (timens) before CRIU has written its
 * namespace's id maps, when it is nobody there: the directory is searchable
 * by all (its files are CRIU's 0644), behind the sandbox's directory, which
 * only the machine's root enters. */
static int give_image(const char *dir, uid_t owner)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int rc = fchown(dirfd(d), owner, owner) == 0 && fchmod(dirfd(d), 0711) == 0 ? 0 : -1;
	for (struct dirent *e; rc == 0 && (e = readdir(d));)
		if (e->d_name[0] != '.' &&
			fchownat(dirfd(d), e->d_name, owner, owner, AT_SYMLINK_NOFOLLOW) != 0)
			rc = -1;
	closedir(d);
	return rc;
}

/* A copy of the file src as dst (new, 0644). 0, or -1 with errno. */
/* The two numbers an image keeps in a small text file of its own. */
static bool read_pair(const char *path, unsigned long *a, unsigned long *b)
{
	FILE *f = fopen(path, "re");
	bool ok = f && fscanf(f, "%lu %lu", a, b) == 2;
	if (f)
		fclose(f);
	return ok;
}

static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int out = in < 0 ? -1 : open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	char buf[8192];
	ssize_t n = -1;
	while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	int rc = n == 0 && close(out) == 0 ? 0 : -1;
	if (rc != 0 && out >= 0)
		close(out);
	if (in >= 0)
		close(in);
	return rc;
}

static unsigned long socket_inode(pid_t pid, int fd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, fd);
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode) ? (unsigned long)st.st_ino : 0;
}

/* fsync of a directory (a rename in it made durable). */
static void sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* `criu dump` of sb's tree into the new directory tmp (made here), with the
 * init's socket inodes and the id range's first id written beside
 * (SOCKETS_FILE, IDS_FILE). leave_running: its processes go on after,
 * untouched, else they have ended. 0; -1 with err (status 0) when the dump
 * failed (the tree runs on, tmp removed); -2 when the tree has ended but
 * what goes beside could not be written (tmp left to the caller). */
static int dump_into(struct sandbox *sb, const char *dir, bool leave_running, struct err *err)
{
	struct sandbox_rt *rt = sb->rt;
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s", dir);
	tree_remove(tmp);
	unsigned long req = socket_inode(rt->init_pid, INIT_FD_REQUESTS);
	unsigned long ev = socket_inode(rt->init_pid, INIT_FD_EVENTS);
	if (mkdir(tmp, 0700) != 0 || req == 0 || ev == 0) {
		err_set(err, 0, "cannot prepare the image: %s", strerror(errno ? errno : EIO));
		tree_remove(tmp);
		return -1;
	}
	char pid[16], ext_req[48], ext_ev[48], sockets[4200], ids[4200];
	snprintf(pid, sizeof pid, "%d", (int)rt->init_pid);
	snprintf(ext_req, sizeof ext_req, "unix[%lu]", req);
	snprintf(ext_ev, sizeof ext_ev, "unix[%lu]", ev);
	snprintf(sockets, sizeof sockets, "%s/" SOCKETS_FILE, tmp);
	snprintf(ids, sizeof ids, "%s/" IDS_FILE, tmp);
	char *argv[] = {"criu", "dump", "-t", pid, "-D", tmp, "-o", "dump.log", "-v2", "--ext-unix-sk",
		"--external", ext_req, "--external", ext_ev, "--external",
		"mnt[" INIT_SELF_PATH "]:" INIT_MOUNT_KEY, "--manage-cgroups=ignore", "--tcp-close",
		leave_running ? "--leave-running" : NULL, NULL};
	/* Dumpable while CRIU looks at it (INIT_DUMPABLE says why); a command of
	 * the sandbox still cannot trace it meanwhile: it lacks CAP_SYS_PTRACE
	 * and capabilities the init has. */
	if (runtime_spawn_dumpable(sb, true) != 0) {
		err_set(err, 0, "the sandbox's init does not answer: %s", strerror(errno));
		runtime_spawn_dumpable(sb, false);
		tree_remove(tmp);
		return -1;
	}
	int rc = run_criu(argv, NULL, NULL, 0);
	if (rc != 0 || leave_running)
		runtime_spawn_dumpable(sb, false);
	if (rc != 0) {
		criu_failure(tmp, "dump.log", rc, "criu dump failed", err);
		tree_remove(tmp);
		return -1; /* CRIU lets the tree run on after a failed dump */
	}
	FILE *f = fopen(sockets, "we");
	bool written = f && fprintf(f, "%lu %lu\n", req, ev) > 0;
	if (f && fclose(f) != 0)
		written = false;
	f = fopen(ids, "we");
	if (!f || fprintf(f, "%lu %lu\n", (unsigned long)rt->ids.base, rt->ids.count) <= 0)
		written = false;
	if (f && fclose(f) != 0)
		written = false;
	if (!written) {
		err_set(err, 0, "cannot keep the image: %s", strerror(errno));
		return -2;
	}
	return 0;
}

int runtime_checkpoint_dump(struct sandbox *sb, struct err *err)
{
	if (runtime_checkpoint_allowed(sb, err) != 0)
		return -1;
	char tmp[4096], dir[4096];
	image_path(sb, RUNTIME_CHECKPOINT_TMP, tmp, sizeof tmp);
	image_path(sb, RUNTIME_CHECKPOINT_DIR, dir, sizeof dir);
	tree_remove(dir);
	int rc = dump_into(sb, tmp, false, err);
	if (rc == -1)
		return -1;
	/* The tree has ended. The image is complete on disk before it counts:
	 * its files synced, then the directory renamed into place. */
	bool written = rc == 0 && give_image(tmp, sb->rt->ids.base) == 0;
	int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool synced = dfd >= 0 && syncfs(dfd) == 0;
	if (dfd >= 0)
		close(dfd);
	if (!written || !synced || rename(tmp, dir) != 0) {
		if (rc == 0)
			err_set(err, 0, "cannot keep the image: %s", strerror(errno));
		tree_remove(tmp);
		runtime_sandbox_stop(sb);
		return -2; /* its processes are gone */
	}
	sync_dir(sb->dir);
	runtime_sandbox_stop(sb); /* cold: disk unmounted and kept */
	return 0;
}

int runtime_checkpoint_copy(struct sandbox *sb, const char *dir, struct err *err)
{
	if (runtime_checkpoint_allowed(sb, err) != 0)
		return -1;
	int rc = dump_into(sb, dir, true, err);
	if (rc == -2)
		tree_remove(dir);
	return rc == 0 ? 0 : -1;
}

int runtime_checkpoint_take(struct sandbox *sb, const char *from, struct err *err)
{
	char tmp[4096], dir[4096], path[4200];
	if (!sb->rt || !runtime_sandbox_cold(sb))
		return err_set(err, 0, "the sandbox is not stopped");
	image_path(sb, RUNTIME_CHECKPOINT_TMP, tmp, sizeof tmp);
	image_path(sb, RUNTIME_CHECKPOINT_DIR, dir, sizeof dir);
	tree_remove(tmp);
	tree_remove(dir);
	snprintf(path, sizeof path, "%s/" IDS_FILE, from);
	unsigned long base = 0, count = 0;
	DIR *d = read_pair(path, &base, &count) && mkdir(tmp, 0700) == 0 ? opendir(from) : NULL;
	if (!d) {
		err_set(err, 0, "cannot read the image: %s", strerror(errno ? errno : EIO));
		tree_remove(tmp);
		return -1;
	}
	/* Links: the image is read, never written, by a restore. The id maps
	 * are written anew (runtime_checkpoint_ids.h), never through a link. */
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		char src[4400], dst[4400];
		if (e->d_name[0] == '.' || strstr(e->d_name, ".log"))
			continue;
		snprintf(src, sizeof src, "%s/%s", from, e->d_name);
		snprintf(dst, sizeof dst, "%s/%s", tmp, e->d_name);
		if (strncmp(e->d_name, "userns-", 7) == 0)
			rc = copy_file(src, dst);
		else
			rc = link(src, dst);
	}
	closedir(d);
	if (rc != 0) {
		err_set(err, 0, "cannot copy the image: %s", strerror(errno));
		tree_remove(tmp);
		return -1;
	}
	if (count != sb->rt->ids.count) {
		err_set(err, 0, "the image's id range has another size");
		tree_remove(tmp);
		return -1;
	}
	if (runtime_checkpoint_shift_ids(tmp, (uid_t)base, sb->rt->ids.base, count, err) != 0) {
		tree_remove(tmp);
		return -1;
	}
	if (give_image(tmp, sb->rt->ids.base) != 0 || rename(tmp, dir) != 0) {
		err_set(err, 0, "cannot copy the image: %s", strerror(errno));
		tree_remove(tmp);
		return -1;
	}
	return 0;
}

int runtime_checkpoint_restore(struct sandbox *sb, struct err *err)
{
	char dir[4096], file[4200];
	image_path(sb, RUNTIME_CHECKPOINT_DIR, dir, sizeof dir);
	snprintf(file, sizeof file, "%s/" SOCKETS_FILE, dir);
	unsigned long req = 0, ev = 0;
	if (!read_pair(file, &req, &ev) || !sb->rt || !runtime_sandbox_cold(sb))
		return err_set(err, 500, "no checkpoint image to restore");
	if (sb->rt->rebase)
		return err_set(err, 500,
			"the checkpoint's id range is another "
			"backend's now; the sandbox cannot be restored");
	if (runtime_sandbox_reserve(sb, err) != 0)
		return -1;
	struct sandbox_rt *rt = sb->rt;
	int mounted = runtime_sandbox_mount(sb, err); /* its directories exist: kept */
	rt->kept = false;                             /* from here a stop unmounts it all again */
	if (mounted != 0) {
		runtime_sandbox_stop(sb);
		return -1;
	}
	int rq[2], evp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rq) != 0) {
		err_set(err, 500, "socketpair: %s", strerror(errno));
		runtime_sandbox_stop(sb);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, evp) != 0) {
		err_set(err, 500, "socketpair: %s", strerror(errno));
		close(rq[0]);
		close(rq[1]);
		runtime_sandbox_stop(sb);
		return -1;
	}
	char inherit_req[64], inherit_ev[64], pidfile[4200], init_mount[4200];
	snprintf(inherit_req, sizeof inherit_req, "fd[%d]:socket:[%lu]", rq[1], req);
	snprintf(inherit_ev, sizeof inherit_ev, "fd[%d]:socket:[%lu]", evp[1], ev);
	snprintf(pidfile, sizeof pidfile, "%s/restore.pid", dir);
	snprintf(init_mount, sizeof init_mount, "mnt[" INIT_MOUNT_KEY "]:%s", runtime_self()->init_path);
	char *argv[] = {"criu", "restore", "-D", dir, "-o", "restore.log", "-v2", "-d", "--restore-sibling",
		"--pidfile", pidfile, "--root", rt->rootfs, "--ext-unix-sk", "--inherit-fd", inherit_req,
		"--inherit-fd", inherit_ev, "--external", init_mount, "--manage-cgroups=ignore",
		"--tcp-close", NULL};
	int keep[] = {rq[1], evp[1]};
	int rc = run_criu(argv, &rt->cg, keep, 2);
	close(rq[1]);
	close(evp[1]);
	rt->req_fd = rq[0];
	rt->ev_fd = evp[0];
	FILE *f = rc == 0 ? fopen(pidfile, "re") : NULL;
	int pid = 0;
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	if (rc != 0 || pid <= 0) {
		criu_failure(dir, "restore.log", rc, "criu restore failed", err);
		err->status = 500;
	} else if ((rt->init_pid = pid, runtime_clone_open_namespaces(rt)) != 0) {
		err_set(err, 500, "cannot open the restored init: %s", strerror(errno));
	} else if (runtime_spawn_swap(sb) != 0 || runtime_spawn_watch(sb) != 0) {
		err_set(err, 500, "the restored init does not answer: %s", strerror(errno));
	} else {
		/* Running: the image is spent (a later pause makes a new one). */
		char spent[4200];
		snprintf(spent, sizeof spent, "%s/" RUNTIME_CHECKPOINT_TMP, sb->dir);
		tree_remove(spent);
		if (rename(dir, spent) == 0)
			tree_remove(spent);
		return 0;
	}
	fprintf(stderr, "sandbox %s: %s\n", sb->id, err->msg);
	runtime_sandbox_stop(sb); /* cold again, its image kept */
	return -1;
}
