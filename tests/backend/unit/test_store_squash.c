/* store/: squashing layers (store_squash_merge, on store_shift_merge). Four
 * layers made here, then merged: whiteouts kept only where the bottom has
 * the name, opaque directories (a layer's own, and one made over a file
 * that hid the bottom's directory), files, symbolic links, hard links,
 * owners, modes and xattrs as the layers have them. Then the proof that
 * matters: an overlay of [bottom, merged] shows exactly what an overlay of
 * the whole stack shows (both mounted read-only in a mount namespace of a
 * child, compared entry by entry). Needs root (whiteouts, trusted.*). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "check.h"
#include "lib/err.h"
#include "lib/tree_remove.h"
#include "store/store_squash.h"
#include "suites.h"

static char top[64];

static const char *at(const char *layer, const char *rel)
{
	static char path[4][512];
	static int next;
	char *p = path[next++ % 4];
	snprintf(p, sizeof path[0], "%s/%s%s%s", top, layer, rel[0] ? "/" : "", rel);
	return p;
}

static void dir(const char *layer, const char *rel, mode_t mode, uid_t uid)
{
	const char *p = at(layer, rel);
	CHECK(mkdir(p, mode) == 0 && chmod(p, mode) == 0 && lchown(p, uid, uid) == 0);
}

static void file(const char *layer, const char *rel, const char *text, mode_t mode, uid_t uid)
{
	const char *p = at(layer, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	if (fd >= 0)
		close(fd);
	CHECK(lchown(p, uid, uid) == 0 && chmod(p, mode) == 0); /* chown clears setuid */
}

static void whiteout(const char *layer, const char *rel)
{
	CHECK(mknod(at(layer, rel), S_IFCHR | 0600, makedev(0, 0)) == 0);
}

static void opaque(const char *layer, const char *rel)
{
	CHECK(setxattr(at(layer, rel), "trusted.overlay.opaque", "y", 1, 0) == 0);
}

static bool is_opaque(const char *path)
{
	char v[2];
	return getxattr(path, "trusted.overlay.opaque", v, sizeof v) == 1 && v[0] == 'y';
}

static bool is_whiteout(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
}

static bool missing(const char *path)
{
	struct stat st;
	return lstat(path, &st) != 0;
}

static void make_layers(void)
{
	const char *names[] = {"bottom", "l1", "l2", "l3"};
	for (size_t i = 0; i < 4; i++)
		dir(names[i], "", 0755, 0);
	/* The base: a file to delete, a directory to hide, one to replace, one
	 * to thin out, and /lib as Debian's link. */
	dir("bottom", "etc", 0755, 0);
	file("bottom", "etc/issue", "Debian\n", 0644, 0);
	file("bottom", "etc/keep", "kept\n", 0644, 0);
	dir("bottom", "opt", 0755, 0);
	file("bottom", "opt/old", "old\n", 0644, 0);
	dir("bottom", "data", 0755, 0);
	file("bottom", "data/b", "bottom's\n", 0644, 0);
	dir("bottom", "sub", 0755, 0);
	dir("bottom", "sub/a", 0755, 0);
	file("bottom", "sub/a/x", "x\n", 0644, 0);
	file("bottom", "sub/y", "y\n", 0644, 0);
	CHECK(symlink("usr/lib", at("bottom", "lib")) == 0);
	/* l1: a base file deleted, a directory made opaque, files of its own. */
	dir("l1", "etc", 0755, 0);
	whiteout("l1", "etc/issue");
	dir("l1", "opt", 0750, 1000);
	opaque("l1", "opt");
	file("l1", "opt/new", "new\n", 0640, 1000);
	dir("l1", "made", 0700, 1000);
	file("l1", "made/one", "from l1\n", 0600, 1000);
	CHECK(setxattr(at("l1", "made/one"), "user.note", "v1", 2, 0) == 0);
	file("l1", "hard1", "hard\n", 04755, 0);
	CHECK(link(at("l1", "hard1"), at("l1", "hard2")) == 0);
	file("l1", "gone", "made, then deleted\n", 0644, 0);
	/* l2: deletes what l1 made, replaces a base directory by a file,
	 * removes a base directory. */
	whiteout("l2", "gone");
	dir("l2", "made", 0755, 1000);
	file("l2", "made/two", "from l2\n", 0644, 0);
	file("l2", "data", "a file now\n", 0644, 0);
	dir("l2", "sub", 0755, 0);
	whiteout("l2", "sub/a");
	/* l3: a directory again where l2's file hid the base's, a link replaces
	 * a file, a FIFO. */
	dir("l3", "data", 0775, 1000);
	file("l3", "data/three", "from l3\n", 0644, 1000);
	dir("l3", "made", 0711, 1000);
	CHECK(symlink("/etc/keep", at("l3", "made/one")) == 0 &&
		lchown(at("l3", "made/one"), 1000, 1000) == 0);
	CHECK(mkfifo(at("l3", "fifo"), 0600) == 0 && chmod(at("l3", "fifo"), 0620) == 0);
}

static void check_merged(const char *m)
{
	char p[600], v[8];
	struct stat st, st2;
#define IN(rel) (snprintf(p, sizeof p, "%s/%s", m, rel), p)
	CHECK(is_whiteout(IN("etc/issue"))); /* the base has it: it stays hidden */
	CHECK(missing(IN("etc/keep")));      /* the base's alone: not copied */
	CHECK(missing(IN("gone")));          /* made and deleted above the base: nothing */
	CHECK(is_opaque(IN("opt")));         /* a layer's own opaque directory */
	CHECK(lstat(IN("opt"), &st) == 0 && (st.st_mode & 07777) == 0750 && st.st_uid == 1000);
	CHECK(lstat(IN("opt/new"), &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_gid == 1000);
	CHECK(is_opaque(IN("data"))); /* over l2's file, which hid the base's */
	CHECK(lstat(IN("data/three"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK(missing(IN("data/b")));
	CHECK(!is_opaque(IN("made"))); /* above the base only: nothing to hide */
	CHECK(lstat(IN("made"), &st) == 0 && (st.st_mode & 07777) == 0711); /* the top layer's */
	CHECK(lstat(IN("made/one"), &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid == 1000);
	CHECK(lstat(IN("made/two"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK(getxattr(IN("made/one"), "user.note", v, sizeof v) < 0);
	CHECK(is_whiteout(IN("sub/a")));
	CHECK(!is_opaque(IN("sub")) && missing(IN("sub/y")));
	CHECK(lstat(IN("hard1"), &st) == 0 && lstat(IN("hard2"), &st2) == 0 && st.st_ino == st2.st_ino &&
		(st.st_mode & 07777) == 04755);
	CHECK(lstat(IN("fifo"), &st) == 0 && S_ISFIFO(st.st_mode) && (st.st_mode & 0777) == 0620);
#undef IN
}

/* The child's half: what differs between two trees (entry by entry), on stderr. */
static int compare(const char *a, const char *b)
{
	struct stat x, y;
	if (lstat(a, &x) != 0 || lstat(b, &y) != 0) {
		fprintf(stderr, "  differ: %s is %s\n", lstat(a, &x) ? a : b, "missing");
		return 1;
	}
	int bad = 0;
	if (x.st_mode != y.st_mode || x.st_uid != y.st_uid || x.st_gid != y.st_gid ||
		(!S_ISDIR(x.st_mode) &&
			(x.st_size != y.st_size || x.st_mtim.tv_sec != y.st_mtim.tv_sec ||
				x.st_mtim.tv_nsec != y.st_mtim.tv_nsec))) {
		fprintf(stderr, "  differ: %s (mode %o/%o, uid %u/%u)\n", a, x.st_mode, y.st_mode,
			(unsigned)x.st_uid, (unsigned)y.st_uid);
		bad++;
	}
	char va[256] = "", vb[256] = "";
	ssize_t na = lgetxattr(a, "user.note", va, sizeof va), nb = lgetxattr(b, "user.note", vb, sizeof vb);
	if (na != nb || (na > 0 && memcmp(va, vb, (size_t)na) != 0)) {
		fprintf(stderr, "  differ: user.note of %s\n", a);
		bad++;
	}
	if (S_ISLNK(x.st_mode)) {
		na = readlink(a, va, sizeof va);
		nb = readlink(b, vb, sizeof vb);
		bad += na != nb || memcmp(va, vb, (size_t)(na > 0 ? na : 0)) != 0;
	}
	if (S_ISREG(x.st_mode)) {
		FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
		na = fa ? (ssize_t)fread(va, 1, sizeof va, fa) : -1;
		nb = fb ? (ssize_t)fread(vb, 1, sizeof vb, fb) : -1;
		bad += na != nb || memcmp(va, vb, (size_t)(na > 0 ? na : 0)) != 0;
		if (fa)
			fclose(fa);
		if (fb)
			fclose(fb);
	}
	if (!S_ISDIR(x.st_mode) || bad)
		return bad;
	struct dirent **la = NULL, **lb = NULL;
	int ca = scandir(a, &la, NULL, alphasort), cb = scandir(b, &lb, NULL, alphasort);
	if (ca != cb) {
		fprintf(stderr, "  differ: %s has %d entries, %s %d\n", a, ca, b, cb);
		bad++;
	}
	for (int i = 0; !bad && i < ca; i++) {
		if (strcmp(la[i]->d_name, lb[i]->d_name) != 0) {
			fprintf(stderr, "  differ: %s/%s vs %s/%s\n", a, la[i]->d_name, b, lb[i]->d_name);
			bad++;
		} else if (strcmp(la[i]->d_name, ".") != 0 && strcmp(la[i]->d_name, "..") != 0) {
			char pa[600], pb[600];
			snprintf(pa, sizeof pa, "%s/%s", a, la[i]->d_name);
			snprintf(pb, sizeof pb, "%s/%s", b, lb[i]->d_name);
			bad += compare(pa, pb);
		}
	}
	for (int i = 0; i < ca; i++)
		free(la[i]);
	for (int i = 0; i < cb; i++)
		free(lb[i]);
	free(la);
	free(lb);
	return bad;
}

/* In a child of its own mount namespace: both stacks as read-only overlays. */
static int same_view(void)
{
	char whole[1200], squashed[600];
	snprintf(whole, sizeof whole, "lowerdir=%s:%s:%s:%s", at("l3", ""), at("l2", ""), at("l1", ""),
		at("bottom", ""));
	snprintf(squashed, sizeof squashed, "lowerdir=%s:%s", at("merged", ""), at("bottom", ""));
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		mkdir(at("view-whole", ""), 0755) != 0 || mkdir(at("view-squashed", ""), 0755) != 0 ||
		mount("overlay", at("view-whole", ""), "overlay", MS_RDONLY, whole) != 0 ||
		mount("overlay", at("view-squashed", ""), "overlay", MS_RDONLY, squashed) != 0) {
		perror("  cannot mount the two overlays");
		return 1;
	}
	return compare(at("view-whole", ""), at("view-squashed", "")) ? 1 : 0;
}

void suite_store_squash(void)
{
	if (geteuid() != 0)
		return; /* whiteouts, owners and trusted.* xattrs need root, as the store's helpers have */
	snprintf(top, sizeof top, "/tmp/e2bw-squash-XXXXXX");
	CHECK(mkdtemp(top) != NULL);
	make_layers();
	char layer[5][128];
	const char *names[] = {"bottom", "l1", "l2", "l3", "merged"};
	for (size_t i = 0; i < 5; i++)
		snprintf(layer[i], sizeof layer[i], "%s", at(names[i], ""));
	const char *roots[] = {layer[0], layer[1], layer[2], layer[3]};
	const char *merged = layer[4];
	struct err why;
	err_clear(&why);
	uint64_t bytes = 0;
	CHECK(store_squash_merge(roots, 4, merged, &bytes, &why) == 0);
	if (why.msg[0])
		fprintf(stderr, "  %s\n", why.msg);
	check_merged(merged);
	/* new + one's link target + two + hard (once per name) + three */
	CHECK_NUM(bytes,
		strlen("new\n") + strlen("/etc/keep") + strlen("from l2\n") + 2 * strlen("hard\n") +
			strlen("from l3\n"));
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0)
		_exit(same_view());
	int status = -1;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* Bad input: nothing to merge, a layer that is not there. */
	CHECK(store_squash_merge(roots, 1, at("none", ""), &bytes, &why) == -1);
	CHECK(strstr(why.msg, "nothing to squash") != NULL);
	char nowhere[128];
	snprintf(nowhere, sizeof nowhere, "%s", at("no-such-layer", ""));
	const char *lost[] = {layer[0], nowhere};
	CHECK(store_squash_merge(lost, 2, at("lost", ""), &bytes, &why) == -1);
	CHECK(strstr(why.msg, "cannot open the layer to copy") != NULL);
	CHECK(tree_remove(top) == 0);
}
