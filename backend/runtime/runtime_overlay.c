/* A sandbox's overlay root over a stack of layers (runtime_overlay.h). */
#define _GNU_SOURCE
#include "runtime/runtime_overlay.h"

#include "lib/err.h"
#include "runtime/runtime_sandbox.h"
#include "runtime/runtime_disk.h"
#include "runtime/runtime_ids.h"
#include "runtime/runtime_userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* Paths here are built into fixed buffers (PATH_MAX-sized); one that would
 * not fit is cut and then simply not found, except the overlay's options,
 * whose length is checked. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

char *runtime_template_rootfs(const char *template_id)
{
	/* A template name is one path element of [A-Za-z0-9._-], not "." or "..". */
	size_t n = strlen(template_id);
	if (n == 0 || n > 64 || template_id[0] == '.')
		return NULL;
	for (size_t i = 0; i < n; i++) {
		char c = template_id[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-'))
			return NULL;
	}
	char *path = malloc(strlen(runtime_self()->templates_dir) + n + 16);
	if (path)
		sprintf(path, "%s/%s/rootfs", runtime_self()->templates_dir, template_id);
	return path;
}

/* The where and why of a failed mount, for the create's 500. */
static int failed(struct err *err, const char *what)
{
	return err_set(err, 500, "%s: %s", what, strerror(errno));
}

/* Rootless cannot idmap: its one layer must already belong to the ids the
 * sandboxes' root and users are (the subordinate ids). */
static int check_rootless(const char *const *layers, size_t n, const struct sandbox_rt *rt, struct err *err)
{
	struct stat st;
	if (n > 1)
		return err_set(err, 400,
			"rootless isolation starts sandboxes from one "
			"layer only (it has no idmapped mounts), not a stack of %zu",
			n);
	if (stat(layers[0], &st) != 0)
		return failed(err, "cannot find the sandbox's layer");
	if (st.st_uid != rt->ids.base)
		return err_set(err, 500,
			"the sandbox's layer is owned by uid %u in the "
			"backend's namespace, not by the sandboxes' root (%u): rootless needs layers made "
			"by this user from its subordinate ids",
			(unsigned)st.st_uid, (unsigned)rt->ids.base);
	return 0;
}

/* lowerdir=lower<n-1>:...:lower0,upperdir=...: the top layer first. */
static int overlay_options(char *opts, size_t len, size_t n, const char *on)
{
	size_t used = (size_t)snprintf(opts, len, "lowerdir=");
	for (size_t i = n; i-- > 0 && used < len;)
		used += (size_t)snprintf(opts + used, len - used, "lower%zu%s", i, i ? ":" : "");
	if (used < len)
		used += (size_t)snprintf(opts + used, len - used, ",upperdir=%supper,workdir=%swork%s", on,
			on, runtime_self()->mode == ISOLATION_ROOTLESS ? ",userxattr" : "");
	if (used >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Each layer, idmapped (its root's files are the sandbox root's: host id
 * base + 0, and so on; rootless already owned so), read-only at
 * <dir>/lower<i>. */
/* mkdir's result, where an existing directory is fine for a kept sandbox
 * (runtime_sandbox_adopt): its directories are there from its last run. */
static int made(int rc, const struct sandbox_rt *rt)
{
	return rc == 0 || (rt->kept && errno == EEXIST) ? 0 : -1;
}

static int mount_layers(const char *const *layers, size_t n, struct sandbox_rt *rt, int dir_fd,
	struct err *err)
{
	int userns = runtime_self()->mode == ISOLATION_FULL ? runtime_ids_userns(&rt->ids) : -1;
	if (runtime_self()->mode == ISOLATION_FULL && userns < 0)
		return failed(err, "cannot map the sandbox's ids");
	for (size_t i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "lower%zu", i);
		if (made(mkdirat(dir_fd, name, 0755), rt) != 0)
			return failed(err, "cannot mount the sandbox's root");
		if (runtime_userns_mount_lower(layers[i], userns, dir_fd, name) != 0) {
			char what[64];
			snprintf(what, sizeof what, "cannot mount layer %zu of the sandbox's root", i);
			return failed(err, what);
		}
		rt->lowers_mounted = (int)i + 1;
	}
	return 0;
}

int runtime_overlay_mount(struct sandbox *sb, struct sandbox_rt *rt, struct err *err)
{
	char *template = sb->layer_count ? NULL : runtime_template_rootfs(sb->template_id);
	const char *const *layers =
		sb->layer_count ? (const char *const *)sb->layers : (const char *const *)&template;
	size_t n = sb->layer_count ? sb->layer_count : 1;
	char upper[4096], work[4096], opts[8192];
	/* On the sandbox's disk image (runtime_disk.h): its size is the limit.
	 * Rootless has none: they lie in the sandbox's directory. */
	const char *on = runtime_self()->mode == ISOLATION_FULL ? RUNTIME_DISK_MOUNT "/" : "";
	snprintf(upper, sizeof upper, "%s/%supper", sb->dir, on);
	snprintf(work, sizeof work, "%s/%swork", sb->dir, on);
	rt->rootfs = malloc(strlen(sb->dir) + 8);
	int dir_fd = open(sb->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rc = -1;
	if (n > RUNTIME_MAX_LAYERS)
		err_set(err, 400,
			"a stack of %zu layers is more than the %d a "
			"sandbox can start from",
			n, RUNTIME_MAX_LAYERS);
	else if (!rt->rootfs || !layers[0] || dir_fd < 0)
		failed(err, "cannot mount the sandbox's root");
	else if (runtime_self()->mode == ISOLATION_ROOTLESS && check_rootless(layers, n, rt, err) != 0)
		rc = -1; /* err says why */
	else if (overlay_options(opts, sizeof opts, n, on) != 0 || made(mkdir(upper, 0755), rt) != 0 ||
		made(mkdir(work, 0700), rt) != 0)
		failed(err, "cannot mount the sandbox's root");
	else
		rc = mount_layers(layers, n, rt, dir_fd, err);
	free(template);
	if (dir_fd >= 0)
		close(dir_fd);
	if (rc != 0)
		return -1;
	sprintf(rt->rootfs, "%s/rootfs", sb->dir);
	/* Relative paths from the sandbox's directory: the options are what
	 * /proc/self/mountinfo shows inside the sandbox, and they name no host
	 * path. rootless mounts in a user namespace: overlay's own xattrs are then
	 * user.overlay.* (userxattr). "/" of the sandbox is the upper layer's root
	 * directory. */
	if (made(mkdir(rt->rootfs, 0755), rt) != 0 || chown(upper, rt->ids.base, rt->ids.base) != 0 ||
		chdir(sb->dir) != 0)
		return failed(err, "cannot mount the sandbox's root");
	rc = mount("overlay", "rootfs", "overlay", 0, opts);
	int e = errno;
	if (fchdir(runtime_self()->cwd_fd) != 0) {
		fprintf(stderr, "e2b-local-backend: cannot return to its working directory\n");
		abort();
	}
	errno = e;
	if (rc != 0)
		return failed(err, "cannot mount the sandbox's root");
	rt->mounted = true;
	rt->root_fd = open(rt->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return rt->root_fd >= 0 ? 0 : failed(err, "cannot mount the sandbox's root");
}

void runtime_overlay_unmount(const struct sandbox_rt *rt, const char *dir)
{
	if (rt->mounted)
		umount2(rt->rootfs, MNT_DETACH);
	for (int i = rt->lowers_mounted; i-- > 0;) {
		char path[4096];
		snprintf(path, sizeof path, "%s/lower%d", dir, i);
		umount2(path, MNT_DETACH);
	}
}

int runtime_sandbox_upper(const struct sandbox *sb, char *path, size_t path_len, uid_t *id_base,
	unsigned long *id_count)
{
	const struct sandbox_rt *rt = sb->rt;
	if (!rt || !rt->mounted) {
		errno = EINVAL;
		return -1;
	}
	const char *on = runtime_self()->mode == ISOLATION_FULL ? RUNTIME_DISK_MOUNT "/" : "";
	int n = snprintf(path, path_len, "%s/%supper", sb->dir, on);
	if (n < 0 || (size_t)n >= path_len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*id_base = rt->ids.base;
	*id_count = rt->ids.count;
	return 0;
}
