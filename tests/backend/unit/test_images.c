/* images/: references and mirrors (images_ref.c), what is read of an
 * image's manifest and config (images_config.c), and one layer unpacked as
 * an overlay layer (images_unpack.c) from tars made here with libarchive:
 * plain, gzip and zstd; whiteouts, opaque directories, owners, links,
 * xattrs; and the layers it must refuse. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../core/sha256.h"
#include "check.h"
#include "images/images_config.h"
#include "images/images_ref.h"
#include "images/images_unpack.h"
#include "lib/err.h"
#include "lib/tree_remove.h"
#include "suites.h"

static void ref_is(const char *text, const char *host, const char *path, const char *tag, const char *digest)
{
	struct images_ref r;
	struct err why;
	CHECK(images_ref_parse(text, &r, &why) == 0);
	CHECK_STR(r.host, host);
	CHECK_STR(r.path, path);
	CHECK_STR(r.tag, tag);
	CHECK_STR(r.digest, digest);
}

static void ref_bad(const char *text, const char *says)
{
	struct images_ref r;
	struct err why;
	CHECK(images_ref_parse(text, &r, &why) == -1);
	CHECK(strstr(why.msg, says) != NULL);
}

static void refs(void)
{
	const char *d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char text[200];
	ref_is("python:3.12", "docker.io", "library/python", "3.12", "");
	ref_is("debian", "docker.io", "library/debian", "latest", "");
	ref_is("library/debian", "docker.io", "library/debian", "latest", "");
	ref_is("docker.io/x/y", "docker.io", "x/y", "latest", "");
	ref_is("index.docker.io/x/y:1", "docker.io", "x/y", "1", "");
	ref_is("127.0.0.1:5000/e2bw/base-image:v1", "127.0.0.1:5000", "e2bw/base-image", "v1", "");
	ref_is("localhost/a_b__c.d-e---f:T_1.x-y", "localhost", "a_b__c.d-e---f", "T_1.x-y", "");
	ref_is("registry.test/a/b/c", "registry.test", "a/b/c", "latest", "");
	ref_is("[::1]:5000/x", "[::1]:5000", "x", "latest", "");
	snprintf(text, sizeof text, "127.0.0.1:5000/x@%s", d);
	ref_is(text, "127.0.0.1:5000", "x", "", d);
	snprintf(text, sizeof text, "ubuntu:22.04@%s", d);
	ref_is(text, "docker.io", "library/ubuntu", "22.04", d);
	ref_bad("", "empty");
	ref_bad("UPPER/Case:1", "must be lowercase");
	ref_bad("a//b", "must be lowercase");
	ref_bad("a-/b", "must be lowercase");
	ref_bad("_a", "must be lowercase");
	ref_bad("a:", "a tag is");
	ref_bad("a:-x", "a tag is");
	ref_bad("a@sha256:12", "a digest");
	ref_bad("a@md5:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "a digest");
	ref_bad("ho$t.x/a", "registry host");
	ref_bad("h.x:99999999/a", "registry host");

	struct images_ref r;
	struct err why;
	char out[300];
	CHECK(images_ref_parse("x.test/a:1", &r, &why) == 0 && !images_ref_is_docker_hub(&r));
	CHECK(images_ref_transport(&r, "mirror:1", out, sizeof out) == 0);
	CHECK_STR(out, "docker://mirror:1/a:1");
	CHECK(images_ref_parse("python", &r, &why) == 0 && images_ref_is_docker_hub(&r));
	CHECK(images_ref_transport(&r, "127.0.0.1:9", out, sizeof out) == 0);
	CHECK_STR(out, "docker://127.0.0.1:9/library/python:latest");
	CHECK(images_ref_transport(&r, "127.0.0.1:9", out, 10) == -1);

	char host[IMAGES_HOST_MAX];
	bool plain;
	CHECK(images_mirror_parse("http://127.0.0.1:5000/", host, &plain) == 0 && plain);
	CHECK_STR(host, "127.0.0.1:5000");
	CHECK(images_mirror_parse("https://mirror.test", host, &plain) == 0 && !plain);
	CHECK(images_mirror_parse("mirror.test:443", host, &plain) == 0 && !plain);
	CHECK(images_mirror_parse("http://mirror.test/v2/", host, &plain) == -1);
	CHECK(images_mirror_parse("ftp://x", host, &plain) == -1);
	CHECK(images_mirror_parse("", host, &plain) == -1);
	CHECK(images_host_is_loopback("127.0.0.1:5000") && images_host_is_loopback("127.1.2.3"));
	CHECK(images_host_is_loopback("localhost:1") && images_host_is_loopback("[::1]:5000"));
	CHECK(!images_host_is_loopback("127.0.0.1.evil.test") && !images_host_is_loopback("10.0.0.1:5000"));
	CHECK(!images_host_is_loopback("localhost.test"));
}

static cJSON *json(const char *text)
{
	cJSON *j = cJSON_Parse(text);
	CHECK(j != NULL);
	return j;
}

static void configs(void)
{
	struct err why;
	char text[600];
	const char *arch = images_config_host_arch();
	snprintf(text, sizeof text,
		"{\"os\":\"linux\",\"architecture\":\"%s\",\"config\":{\"Env\":["
		"\"PATH=/usr/bin\",\"A= spaced \",\"EMPTY=\",\"NOEQ\",\"=v\",\"A=later\"],\"WorkingDir\":\"/app\"},"
		"\"rootfs\":{\"diff_ids\":[\"sha256:%064d\"]}}",
		arch, 7);
	cJSON *c = json(text);
	CHECK(images_config_check_platform(c, "x", &why) == 0);
	cJSON *envs = images_config_envs(c);
	char *printed = cJSON_PrintUnformatted(envs);
	CHECK_STR(printed, "{\"PATH\":\"/usr/bin\",\"A\":\"later\"}");
	free(printed);
	cJSON_Delete(envs);
	CHECK_STR(images_config_workdir(c), "/app");
	cJSON *ids = images_config_diff_ids(c, &why);
	CHECK(cJSON_GetArraySize(ids) == 1);
	cJSON_Delete(ids);
	cJSON_Delete(c);

	c = json(
		"{\"os\":\"linux\",\"architecture\":\"s390x\",\"config\":{\"WorkingDir\":\"rel\"},\"rootfs\":{\"diff_ids\":[\"md5:1\"]}}");
	CHECK(images_config_check_platform(c, "img", &why) == -1);
	CHECK(strstr(why.msg, "image 'img' is for linux/s390x, not linux/") != NULL);
	CHECK(images_config_workdir(c) == NULL);
	CHECK(images_config_diff_ids(c, &why) == NULL && strstr(why.msg, "malformed layer digest"));
	cJSON_Delete(c);
	c = json("{\"rootfs\":{\"diff_ids\":[]}}");
	CHECK(images_config_diff_ids(c, &why) == NULL && strstr(why.msg, "no layers"));
	cJSON_Delete(c);

	snprintf(text, sizeof text,
		"{\"manifests\":[{\"digest\":\"sha256:%064d\",\"platform\":{\"os\":\"linux\",\"architecture\":\"mips\"}},"
		"{\"digest\":\"sha256:%064d\",\"platform\":{\"os\":\"linux\",\"architecture\":\"%s\"}}]}",
		1, 2, arch);
	c = json(text);
	const char *picked = images_config_pick(c, "x", &why);
	CHECK(picked && picked[70] == '2');
	cJSON_Delete(c);
	c = json(
		"{\"manifests\":[{\"digest\":\"sha256:1\",\"platform\":{\"os\":\"windows\",\"architecture\":\"amd64\"}}]}");
	CHECK(images_config_pick(c, "img", &why) == NULL);
	CHECK(strstr(why.msg, "has no linux/") && strstr(why.msg, "(it has windows/amd64)"));
	cJSON_Delete(c);
	double bytes;
	snprintf(text, sizeof text,
		"{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:%064d\"},\"layers\":[{\"size\":10},{\"size\":5}]}",
		3);
	c = json(text);
	CHECK(images_config_layers(c, &bytes, &why) == 2 && bytes == 15);
	cJSON_Delete(c);
	c = json("{\"schemaVersion\":1,\"fsLayers\":[]}");
	CHECK(images_config_layers(c, &bytes, &why) == -1 && strstr(why.msg, "schema 2"));
	cJSON_Delete(c);
}

/* --- layers ------------------------------------------------------------------ */

struct item {
	const char *path;
	mode_t type;
	const char *data; /* a file's bytes, a link's target */
	unsigned uid;
};

/* A pax tar of items, through filter ("none", "gzip", "zstd"). */
static void make_tar(const char *file, const char *filter, const struct item *items, size_t n)
{
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	if (strcmp(filter, "gzip") == 0)
		archive_write_add_filter_gzip(a);
	else if (strcmp(filter, "zstd") == 0)
		archive_write_add_filter_zstd(a);
	CHECK(archive_write_open_filename(a, file) == ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, items[i].path);
		archive_entry_set_mtime(e, 1700000000, 0);
		archive_entry_set_uid(e, items[i].uid);
		archive_entry_set_gid(e, items[i].uid);
		if (items[i].type == AE_IFLNK + 1) { /* a hard link */
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_hardlink(e, items[i].data);
		} else {
			archive_entry_set_filetype(e, items[i].type);
			archive_entry_set_perm(e, items[i].type == AE_IFDIR ? 0750 : 04711);
		}
		if (items[i].type == AE_IFLNK)
			archive_entry_set_symlink(e, items[i].data);
		if (items[i].type == AE_IFCHR)
			archive_entry_set_rdev(e, makedev(1, 3));
		if (items[i].type == AE_IFREG) {
			archive_entry_set_size(e, (la_int64_t)strlen(items[i].data));
			archive_entry_xattr_add_entry(e, "user.kept", "1", 1);
			archive_entry_xattr_add_entry(e, "trusted.overlay.redirect", "/x", 2);
		}
		CHECK(archive_write_header(a, e) == ARCHIVE_OK);
		if (items[i].type == AE_IFREG)
			archive_write_data(a, items[i].data, strlen(items[i].data));
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
}

static void diff_id_of(const char *file, char out[72])
{
	e2bw_sha256 s;
	uint8_t d[32], buf[65536];
	int fd = open(file, O_RDONLY);
	ssize_t n;
	e2bw_sha256_init(&s);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		e2bw_sha256_update(&s, buf, (size_t)n);
	close(fd);
	e2bw_sha256_final(&s, d);
	strcpy(out, "sha256:");
	for (int i = 0; i < 32; i++)
		sprintf(out + 7 + 2 * i, "%02x", d[i]);
}

/* Unpacks items (through filter) into a fresh <dir>/root: 0 or -1, why. */
static int unpack(const char *dir, const char *filter, const struct item *items, size_t n, uint64_t max,
	struct err *why, struct images_unpack_stats *st)
{
	char plain[300], blob[300], root[300], id[72];
	snprintf(plain, sizeof plain, "%s/plain.tar", dir);
	snprintf(blob, sizeof blob, "%s/blob", dir);
	snprintf(root, sizeof root, "%s/root", dir);
	tree_remove(root);
	mkdir(root, 0755);
	make_tar(plain, "none", items, n);
	diff_id_of(plain, id);
	make_tar(blob, filter, items, n);
	return images_unpack_layer(blob, root, id, max, st, why);
}

static void layers(void)
{
	if (geteuid() != 0)
		return; /* owners, whiteouts and trusted.* xattrs need root, as the backend's helpers have */
	char dir[] = "/tmp/e2bw-unpack-XXXXXX", path[400], value[8];
	struct err why;
	CHECK(mkdtemp(dir) != NULL);
	struct images_unpack_stats st;
	static const struct item good[] = {{"./", AE_IFDIR, NULL, 0}, {"a/", AE_IFDIR, NULL, 1000},
		{"a/f", AE_IFREG, "hello\n", 1000}, {"a/h", AE_IFLNK + 1, "a/f", 0},
		{"l", AE_IFLNK, "a/f", 0}, {"big", AE_IFREG, "id", 70000}, {".wh.gone", AE_IFREG, "", 0},
		{"a/.wh..wh..opq", AE_IFREG, "", 0}, {"x/y/.wh.z", AE_IFREG, "", 0},
		{"dev/null", AE_IFCHR, NULL, 0}, {".wh..wh.plnk", AE_IFREG, "", 0},
		{"/abs/name", AE_IFREG, "in\n", 0}};
	const size_t ngood = sizeof good / sizeof good[0];
	for (int f = 0; f < 3; f++) {
		const char *filter = f == 0 ? "none" : f == 1 ? "gzip" : "zstd";
		CHECK(unpack(dir, filter, good, ngood, 1 << 20, &why, &st) == 0);
		CHECK(st.whiteouts == 2 && st.opaque == 1 && st.dropped == 1 && st.tar_bytes > 0);
		struct stat s;
		snprintf(path, sizeof path, "%s/root/a/f", dir);
		CHECK(lstat(path, &s) == 0 && s.st_uid == 1000 && (s.st_mode & 07777) == 04711 &&
			s.st_nlink == 2);
		CHECK(getxattr(path, "user.kept", value, sizeof value) == 1);
		CHECK(getxattr(path, "trusted.overlay.redirect", value, sizeof value) == -1);
		snprintf(path, sizeof path, "%s/root/a", dir);
		CHECK(lstat(path, &s) == 0 && S_ISDIR(s.st_mode) && (s.st_mode & 07777) == 0750);
		CHECK(getxattr(path, "trusted.overlay.opaque", value, sizeof value) == 1 && value[0] == 'y');
		snprintf(path, sizeof path, "%s/root/gone", dir);
		CHECK(lstat(path, &s) == 0 && S_ISCHR(s.st_mode) && s.st_rdev == makedev(0, 0) &&
			s.st_uid == 0);
		snprintf(path, sizeof path, "%s/root/x/y/z", dir);
		CHECK(lstat(path, &s) == 0 && S_ISCHR(s.st_mode));
		snprintf(path, sizeof path, "%s/root/big", dir);
		CHECK(lstat(path, &s) == 0 && s.st_uid == 65534);
		snprintf(path, sizeof path, "%s/root/l", dir);
		CHECK(lstat(path, &s) == 0 && S_ISLNK(s.st_mode));
		snprintf(path, sizeof path, "%s/root/abs/name", dir);
		CHECK(lstat(path, &s) == 0 && S_ISREG(s.st_mode));
		snprintf(path, sizeof path, "%s/root/dev/null", dir);
		CHECK(lstat(path, &s) != 0);
		snprintf(path, sizeof path, "%s/root/.wh..wh.plnk", dir);
		CHECK(lstat(path, &s) != 0);
	}
	CHECK(unpack(dir, "gzip", good, ngood, 100, &why, &st) == -1);
	CHECK(strstr(why.msg, "larger than the limit") != NULL);

	/* A diff id that is not the content's. */
	char blob[300], root[300];
	snprintf(blob, sizeof blob, "%s/blob", dir);
	snprintf(root, sizeof root, "%s/root", dir);
	tree_remove(root);
	mkdir(root, 0755);
	make_tar(blob, "gzip", good, ngood);
	CHECK(images_unpack_layer(blob, root,
		      "sha256:0000000000000000000000000000000000000000000000000000000000000000", 1 << 20, &st,
		      &why) == -1);
	CHECK(strstr(why.msg, "does not match its digest") != NULL);

	/* Ways out of the root, refused; nothing is written outside. */
	char outside[100], target[300];
	snprintf(outside, sizeof outside, "%s/outside", dir);
	mkdir(outside, 0755);
	snprintf(target, sizeof target, "%s/pwned", outside);
	const struct item dotdot[] = {{"a/../../pwned", AE_IFREG, "x", 0}};
	CHECK(unpack(dir, "none", dotdot, 1, 1 << 20, &why, &st) == -1 && strstr(why.msg, "leaves its root"));
	const struct item through[] = {{"evil", AE_IFLNK, outside, 0}, {"evil/pwned", AE_IFREG, "x", 0}};
	CHECK(unpack(dir, "none", through, 2, 1 << 20, &why, &st) == -1);
	const struct item wh_through[] = {{"evil", AE_IFLNK, outside, 0},
		{"evil/.wh.pwned", AE_IFREG, "", 0}};
	CHECK(unpack(dir, "none", wh_through, 2, 1 << 20, &why, &st) == -1);
	const struct item link_out[] = {{"h", AE_IFLNK + 1, "../../../etc/passwd", 0}};
	CHECK(unpack(dir, "none", link_out, 1, 1 << 20, &why, &st) == -1 &&
		strstr(why.msg, "leaves its root"));
	snprintf(path, sizeof path, "%s/secret", outside);
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	const struct item link_through[] = {{"evil", AE_IFLNK, outside, 0},
		{"h", AE_IFLNK + 1, "evil/secret", 0}};
	CHECK(unpack(dir, "none", link_through, 2, 1 << 20, &why, &st) == -1 && strstr(why.msg, "hard link"));
	struct stat s;
	CHECK(lstat(target, &s) != 0);
	CHECK(lstat(path, &s) == 0 && s.st_nlink == 1);

	/* A refused layer leaves the caller's working directory as it was:
	 * libarchive sets a directory's mode and times when the writer closes,
	 * by its name, which must not be read from anywhere but the layer's
	 * root (it was, after a failure: "./" and "etc/" then named the
	 * caller's directories). */
	char cwd_dir[300], here[4096];
	snprintf(cwd_dir, sizeof cwd_dir, "%s/cwd", dir);
	CHECK(mkdir(cwd_dir, 0755) == 0 && getcwd(here, sizeof here) != NULL && chdir(cwd_dir) == 0);
	CHECK(mkdir("etc", 0755) == 0);
	const struct item then_refused[] = {{"./", AE_IFDIR, NULL, 0}, {"etc/", AE_IFDIR, NULL, 0},
		{"a/../../pwned", AE_IFREG, "x", 0}};
	CHECK(unpack(dir, "none", then_refused, 3, 1 << 20, &why, &st) == -1 &&
		strstr(why.msg, "leaves its root"));
	struct stat cwd_st, etc_st;
	CHECK(stat(".", &cwd_st) == 0 && (cwd_st.st_mode & 07777) == 0755);
	CHECK(stat("etc", &etc_st) == 0 && (etc_st.st_mode & 07777) == 0755);
	CHECK(chdir(here) == 0);

	/* Not a tar at all. */
	fd = open(blob, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	CHECK(write(fd, "\x1f\x8b garbage that is no gzip", 27) == 27);
	close(fd);
	CHECK(images_unpack_layer(blob, root,
		      "sha256:0000000000000000000000000000000000000000000000000000000000000000", 1 << 20, &st,
		      &why) == -1);
	tree_remove(dir);
}

void suite_images(void)
{
	refs();
	configs();
	layers();
}
