/* Checks the layer store (backend/store/store_layers.h) with the runtime's
 * stacks (struct sandbox_spec.layers) against real sandboxes: a sandbox from
 * base writes files as root and as user (a deleted template file, a hard
 * link, a symbolic link, a setuid file, a FIFO, a directory replaced whole),
 * its writable layer is sealed into a layer while it is frozen, the layer's
 * tree is checked on the host (canonical ids, the whiteout, the opaque
 * directory, nothing it did not write), and two new sandboxes from
 * [base, that layer] must each see exactly those files, with their owners,
 * and not each other's writes. Then both layers are removed: the sealed one
 * with its files, the external base one without touching the template.
 * Run by tests/node/backend-store.test.mjs; needs root (isolation full).
 *
 *   layers-check TEMPLATES_DIR      prints "ok" and exits 0, or names the failures */
#define _GNU_SOURCE
#include "check_program.h"
#include "lib/err.h"
#include "lib/tree_remove.h"
#include "registry/registry.h"
#include "runtime/runtime.h"
#include "runtime/runtime_enter.h"
#include "runtime/runtime_overlay.h"
#include "runtime/runtime_spawn.h"
#include "runtime/runtime_users.h"
#include "store/store_layers.h"

#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static struct event_base *base;

/* The end of the command run_in started, as its sandbox's init reports it. */
static pid_t ran_pid;
static int ran_status = -1;

static void on_command_exit(void *ctx, struct sandbox *sb, pid_t ns_pid, int status)
{
	(void)ctx;
	(void)sb;
	if (ns_pid == ran_pid)
		ran_status = status;
}

/* Runs script with /bin/sh in the sandbox as user, started by its init as
 * every command is (runtime_spawn.h); its stdout in out. The exit status,
 * or -1. */
static int run_in(struct sandbox *sb, const char *user, const char *script, char *out, size_t len)
{
	struct sandbox_user u;
	if (runtime_user_resolve(sb, user, &u) != 0)
		return -1;
	char *argv[] = {"/bin/sh", "-c", strdup(script), NULL};
	char *envp[] = {"PATH=" SANDBOX_PATH, NULL};
	char *paths[] = {"/bin/sh", NULL};
	struct runtime_command cmd = {.argv = argv, .envp = envp, .paths = paths, .cwd = "/", .account = &u};
	struct runtime_started st;
	enum runtime_spawn_step step;
	runtime_spawn_on_exit(on_command_exit, NULL);
	ran_status = -1;
	int rc = runtime_spawn(sb, &cmd, &st, &step);
	free(argv[2]);
	if (rc != 0)
		return -1;
	ran_pid = st.ns_pid;
	size_t got = 0;
	for (;;) {
		struct pollfd p = {.fd = st.out_fd, .events = POLLIN};
		poll(&p, 1, 1000);
		ssize_t n = read(st.out_fd, out + got, len - 1 - got);
		if (n > 0 && (got += (size_t)n) < len - 1)
			continue;
		if (n > 0 || n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
	}
	out[got] = '\0';
	close(st.out_fd);
	close(st.err_fd);
	if (st.pidfd >= 0)
		close(st.pidfd);
	while (ran_status < 0)
		event_base_loop(base, EVLOOP_ONCE);
	return WIFEXITED(ran_status) ? WEXITSTATUS(ran_status) : -1;
}

/* The result of a seal or a removal, once the loop has run its callback. */
struct outcome {
	int done;
	const struct store_layer *layer;
	char error[512];
};

static void on_done(void *ctx, const struct store_layer *layer, const struct err *err)
{
	struct outcome *o = ctx;
	o->done = 1;
	o->layer = layer;
	snprintf(o->error, sizeof o->error, "%.511s", err ? err->msg : "");
}

static void wait_for(struct outcome *o)
{
	while (!o->done)
		event_base_loop(base, EVLOOP_ONCE);
}

static struct sandbox *create(struct registry *reg, const char *const *layers, size_t n)
{
	struct sandbox_spec spec = {.template_id = "base",
		.layers = layers,
		.layer_count = n,
		.timeout_s = 60,
		.allow_internet_access = -1,
		.cpu_count = 1,
		.memory_mb = 256,
		.disk_size_mb = SANDBOX_DEFAULT_DISK_SIZE_MB};
	struct err err;
	struct sandbox *sb = registry_create(reg, &spec, &err);
	CHECK(sb, "create a sandbox from %zu layer(s): %s", n, err.msg);
	return sb;
}

static const char WRITES_AS_ROOT[] = "set -e; umask 022\n"
				     "rm /etc/debian_version\n"
				     "echo hi > /root/a; ln /root/a /root/b; ln -s /root/a /root/link\n"
				     "cp /bin/true /usr/local/bin/suid; chmod 4755 /usr/local/bin/suid\n"
				     "rm -rf /etc/apt; mkdir /etc/apt; echo new > /etc/apt/new\n"
				     "mkfifo /root/fifo\n";
static const char WRITES_AS_USER[] = "set -e; umask 022; echo u > /home/user/u.txt; mkdir /home/user/d\n";

static const char SEE[] =
	"stat -c '%n %u %g %a %h %F' /root/a /root/b /root/link /usr/local/bin/suid "
	"/home/user/u.txt /home/user/d /root/fifo\n"
	"readlink /root/link; ls -A /etc/apt; cat /root/b\n"
	"test -e /etc/debian_version && echo debian_version here || echo debian_version gone\n"
	"test -s /etc/passwd && echo passwd here\n"
	"grep -m1 -o 'lowerdir=[^,]*' /proc/self/mountinfo\n"; /* the first: /dev/console is a bind from it too */
static const char SEEN[] = "/root/a 0 0 644 2 regular file\n"
			   "/root/b 0 0 644 2 regular file\n"
			   "/root/link 0 0 777 1 symbolic link\n"
			   "/usr/local/bin/suid 0 0 4755 1 regular file\n"
			   "/home/user/u.txt 1000 1000 644 1 regular file\n"
			   "/home/user/d 1000 1000 755 2 directory\n"
			   "/root/fifo 0 0 644 1 fifo\n"
			   "/root/a\nnew\nhi\ndebian_version gone\npasswd here\nlowerdir=lower1:lower0\n";

static void check_layer_tree(const struct store_layer *l)
{
	char path[4096];
	struct stat a, b, st;
#define AT(rel) (snprintf(path, sizeof path, "%s%s", l->root, rel), path)
	CHECK(lstat(AT("/root/a"), &a) == 0 && S_ISREG(a.st_mode) && a.st_uid == 0 && a.st_gid == 0 &&
			a.st_nlink == 2,
		"/root/a: root's, two links (uid %u)", (unsigned)a.st_uid);
	CHECK(lstat(AT("/root/b"), &b) == 0 && b.st_ino == a.st_ino, "/root/b is a hard link of /root/a");
	char target[64] = "";
	CHECK(readlink(AT("/root/link"), target, sizeof target - 1) > 0 && strcmp(target, "/root/a") == 0,
		"/root/link -> /root/a (%s)", target);
	CHECK(lstat(AT("/usr/local/bin/suid"), &st) == 0 && st.st_uid == 0 && (st.st_mode & 07777) == 04755,
		"suid: root's, 4755 (%o)", st.st_mode & 07777);
	CHECK(lstat(AT("/home/user/u.txt"), &st) == 0 && st.st_uid == 1000 && st.st_gid == 1000,
		"u.txt: the user's, canonical 1000 (%u)", (unsigned)st.st_uid);
	CHECK(lstat(AT("/home/user/d"), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 1000,
		"d: the user's directory");
	CHECK(lstat(AT("/etc/debian_version"), &st) == 0 && S_ISCHR(st.st_mode) &&
			st.st_rdev == makedev(0, 0),
		"the deleted template file is a whiteout");
	char opaque[4] = "";
	CHECK(getxattr(AT("/etc/apt"), "trusted.overlay.opaque", opaque, sizeof opaque) == 1 &&
			opaque[0] == 'y',
		"/etc/apt is opaque");
	CHECK(lstat(AT("/root/fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO");
	/* Only what the sandbox wrote: the template's files are not copied. */
	CHECK(lstat(AT("/etc/passwd"), &st) != 0 && lstat(AT("/usr/bin/sudo"), &st) != 0,
		"the layer holds no template file it did not write");
	CHECK(lstat(AT("/etc/apt/sources.list.d"), &st) != 0, "nothing of the replaced directory");
	CHECK(l->size > 0 && l->size < 1024 * 1024, "size %llu", (unsigned long long)l->size);
#undef AT
}

/* No .tmp-* left in layers/. */
static int tmp_dirs(const char *state)
{
	char dir[256];
	snprintf(dir, sizeof dir, "%s/layers", state);
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += strncmp(e->d_name, ".tmp-", 5) == 0;
	if (d)
		closedir(d);
	return n;
}

static void seal_and_stack(struct registry *reg, const char *templates, const char *state)
{
	char out[4096];
	struct sandbox *a = create(reg, NULL, 0);
	if (!a)
		return;
	CHECK(run_in(a, "root", WRITES_AS_ROOT, out, sizeof out) == 0, "root's writes");
	CHECK(run_in(a, "user", WRITES_AS_USER, out, sizeof out) == 0, "user's writes");

	/* freeze -> seal -> thaw, as snapshots will */
	struct store_seal_spec spec = {.parent = "base"};
	char upper[4096];
	CHECK(runtime_sandbox_upper(a, upper, sizeof upper, &spec.id_base, &spec.id_count) == 0 &&
			spec.id_base >= 65536,
		"the upper and the sandbox's ids (base %u)", (unsigned)spec.id_base);
	spec.upper = upper;
	CHECK(runtime_sandbox_freeze(a, true) == 0, "freeze");
	struct outcome sealed = {0};
	char id[STORE_NAME_MAX + 1] = "";
	CHECK(store_layer_seal(&spec, on_done, &sealed, id) == 0 && strlen(id) == 32, "seal starts");
	struct outcome unused = {0};
	spec.id = id;
	CHECK(store_layer_seal(&spec, on_done, &unused, NULL) == -1 && errno == EEXIST, "an id in use");
	spec.id = "../x";
	CHECK(store_layer_seal(&spec, on_done, &unused, NULL) == -1 && errno == EINVAL, "a bad id");
	wait_for(&sealed);
	CHECK(runtime_sandbox_freeze(a, false) == 0, "thaw");
	CHECK(sealed.layer && !sealed.error[0], "sealed: %s", sealed.error);
	if (!sealed.layer)
		return;
	CHECK(store_layer_find(id) == sealed.layer && strcmp(sealed.layer->parent, "base") == 0 &&
			strcmp(sealed.layer->origin, "sealed") == 0,
		"found, with its parent and origin");
	CHECK(tmp_dirs(state) == 0, "no .tmp-* after a seal");
	check_layer_tree(sealed.layer);

	/* base as an external layer: its template directory, not a copy. */
	char rootfs[4096];
	snprintf(rootfs, sizeof rootfs, "%s/base/rootfs", templates);
	CHECK(store_layer_add_external("base", rootfs, NULL) == 0, "base imported: %s", strerror(errno));
	CHECK(store_layer_add_external("base", rootfs, NULL) == 0, "again: nothing changes");
	CHECK(store_layer_add_external(id, rootfs, NULL) == -1 && errno == EEXIST, "a taken id");
	const struct store_layer *bl = store_layer_find("base");
	CHECK(bl && bl->external, "base is external");
	if (!bl)
		return;
	const char *stack[] = {bl->root, sealed.layer->root};
	struct sandbox *c = create(reg, stack, 2);
	struct sandbox *d = c ? create(reg, stack, 2) : NULL;
	if (!d)
		return;
	CHECK(run_in(c, "root", SEE, out, sizeof out) == 0 && strcmp(out, SEEN) == 0,
		"a sandbox from [base, sealed] sees:\n%s\nwanted:\n%s", out, SEEN);
	CHECK(run_in(c, "user", "id -u; echo more >> /home/user/u.txt && echo user writes", out,
		      sizeof out) == 0 &&
			strcmp(out, "1000\nuser writes\n") == 0,
		"the user owns its file: %s", out);
	CHECK(run_in(c, "root", "echo c > /root/only-c; echo changed > /root/a", out, sizeof out) == 0,
		"c writes");
	CHECK(run_in(d, "root", "test -e /root/only-c && echo seen || echo unseen; cat /root/a", out,
		      sizeof out) == 0 &&
			strcmp(out, "unseen\nhi\n") == 0,
		"d is independent of c: %s", out);
	CHECK(run_in(d, "root", SEE, out, sizeof out) == 0 && strcmp(out, SEEN) == 0, "d sees:\n%s", out);
	registry_kill(reg, a);
	registry_kill(reg, c);
	registry_kill(reg, d);

	/* Removal: the sealed layer and its files; base without its template. */
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", sealed.layer->root);
	*strrchr(dir, '/') = '\0';
	struct outcome removed = {0}, removed_base = {0};
	CHECK(store_layer_remove(id, on_done, &removed) == 0, "remove starts");
	CHECK(store_layer_find(id) == NULL && access(dir, F_OK) != 0,
		"gone from lookups and layers/ at once");
	CHECK(store_layer_remove(id, on_done, &unused) == -1 && errno == ENOENT, "removed twice");
	CHECK(store_layer_remove("base", on_done, &removed_base) == 0, "base removed");
	wait_for(&removed);
	wait_for(&removed_base);
	CHECK(!removed.error[0] && !removed_base.error[0], "removals: %s %s", removed.error,
		removed_base.error);
	CHECK(tmp_dirs(state) == 0, "nothing left in layers/");
	snprintf(rootfs, sizeof rootfs, "%s/base/rootfs/etc/passwd", templates);
	CHECK(access(rootfs, F_OK) == 0, "the template itself is untouched");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: layers-check TEMPLATES_DIR\n");
		return 2;
	}
	/* As runtime-api-check: named so, a backend starting meanwhile leaves
	 * its cgroups be (runtime_leftovers.c). */
	prctl(PR_SET_NAME, "e2b-local-backend");
	base = event_base_new();
	char state[] = "/tmp/layers-check.XXXXXX";
	if (!base || !mkdtemp(state))
		return 1;
	if (runtime_init(base, ISOLATION_FULL, argv[1], state) != 0 || store_layers_init(base, state) != 0)
		return 1;
	char sandboxes[64];
	snprintf(sandboxes, sizeof sandboxes, "%s/sandboxes", state);
	mkdir(sandboxes, 0700);
	struct registry *reg = registry_new(base, sandboxes, "layers-check");
	seal_and_stack(reg, argv[1], state);
	registry_free(reg);
	store_layers_shutdown();
	runtime_shutdown();
	tree_remove(state);
	event_base_free(base);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
