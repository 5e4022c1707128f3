/* libFuzzer target: the backend's image layer unpacker
 * (backend/images/images_unpack.c), which turns any bytes a registry serves
 * as a layer (plain, gzip or zstd tar) into a directory of the store. Each
 * input is unpacked into a fresh <dir>/run/root, beside two things the
 * layer must not touch (a file and a directory in <dir>/run), in a
 * directory of the target's own under $TMPDIR or /tmp, removed after each
 * run and at the end; the unpacker is called from <dir>/cwd (holding etc/),
 * which the layer must not touch either (the fuzzer's own directory is
 * the working directory again between runs: libFuzzer writes there). Asserted: no crash; nothing written
 * outside the layer's root (<dir>, <dir>/run and <dir>/cwd hold exactly
 * what they held, untouched: names, modes, owners, times); a refusal is a
 * reason; the process's working directory and descriptors as they were; the diff id it reports is the sha256 of the
 * uncompressed stream (decompressed here on a path of its own, one
 * libarchive reader of the whole stream). An input that is no gzip or zstd
 * gets its tar headers' checksums set right first: libarchive itself is not
 * instrumented, and a mutated name with a stale checksum would only ever
 * test the refusal of a damaged header. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/images_unpack.h"
#include "lib/err.h"

#include "fuzz_require.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TAR (8u << 20) /* a zip bomb stops here, as at --max-image-mb */
#define SENTINEL "the layer must not change this\n"

static char base[512], run_dir[600], root[700], outside_file[700], outside_dir[700], cwd_dir[600];

static void cleanup(void);

static void setup(void)
{
	if (base[0])
		return;
	const char *tmp = getenv("TMPDIR");
	snprintf(base, sizeof base, "%s/e2bw-fuzz-unpack-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	REQUIRE(mkdtemp(base), "cannot make %s", base);
	snprintf(run_dir, sizeof run_dir, "%s/run", base);
	snprintf(root, sizeof root, "%s/root", run_dir);
	snprintf(outside_file, sizeof outside_file, "%s/outside.txt", run_dir);
	snprintf(outside_dir, sizeof outside_dir, "%s/outside", run_dir);
	/* Names the unpacker wrongly took relative to the working directory
   * would land here (a layer's "./" or "etc/"), not in whatever directory
   * the fuzzer was started from. */
	snprintf(cwd_dir, sizeof cwd_dir, "%s/cwd", base);
	char etc[700];
	snprintf(etc, sizeof etc, "%s/etc", cwd_dir);
	REQUIRE(mkdir(cwd_dir, 0755) == 0 && mkdir(etc, 0755) == 0, "cannot make %s", cwd_dir);
	atexit(cleanup);
}

static int make_writable(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D || type == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

static void remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	nftw(path, make_writable, 16, FTW_PHYS);
	REQUIRE(nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0, "cannot remove %s", path);
}

static void cleanup(void)
{
	remove_tree(run_dir);
	remove_tree(cwd_dir);
	rmdir(base);
}

/* Names in dir, sorted and joined with '/'. */
static void listing(const char *dir, char *out, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	REQUIRE(n >= 0, "cannot list %s", dir);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			snprintf(out + strlen(out), len - strlen(out), "%s/", names[i]->d_name);
		free(names[i]);
	}
	free(names);
}

/* path's mode, owner and times (but its access time) as in before. */
static bool same_inode_state(const char *path, const struct stat *before)
{
	struct stat now;
	return lstat(path, &now) == 0 && now.st_mode == before->st_mode && now.st_uid == before->st_uid &&
		now.st_gid == before->st_gid && now.st_mtim.tv_sec == before->st_mtim.tv_sec &&
		now.st_mtim.tv_nsec == before->st_mtim.tv_nsec &&
		now.st_ctim.tv_sec == before->st_ctim.tv_sec &&
		now.st_ctim.tv_nsec == before->st_ctim.tv_nsec;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* sha256 of the stream decompressed by one libarchive reader (raw format,
 * gzip or zstd found by their magic, as the unpacker's outer reader): 0, or
 * -1 when it does not decompress. */
static int oracle(const uint8_t *data, size_t size, char out[72])
{
	struct archive *a = archive_read_new();
	EVP_MD_CTX *sha = EVP_MD_CTX_new();
	struct archive_entry *e;
	int rc = -1;
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_format_raw(a);
	EVP_DigestInit_ex(sha, EVP_sha256(), NULL);
	if (archive_read_open_memory(a, data, size) == ARCHIVE_OK &&
		archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const void *buf;
		size_t n;
		la_int64_t off;
		int r;
		uint64_t total = 0;
		while ((r = archive_read_data_block(a, &buf, &n, &off)) == ARCHIVE_OK &&
			(total += n) <= MAX_TAR)
			EVP_DigestUpdate(sha, buf, n);
		if (r == ARCHIVE_EOF) {
			uint8_t d[EVP_MAX_MD_SIZE];
			EVP_DigestFinal_ex(sha, d, NULL);
			strcpy(out, "sha256:");
			for (int i = 0; i < 32; i++)
				sprintf(out + 7 + 2 * i, "%02x", d[i]);
			rc = 0;
		}
	}
	EVP_MD_CTX_free(sha);
	archive_read_free(a);
	return rc;
}

/* Each header block of a plain tar (from the first, then past each
 * entry's data as its octal size says) given its right checksum. */
static void fix_checksums(uint8_t *tar, size_t size)
{
	for (size_t at = 0; at + 512 <= size;) {
		uint8_t *h = tar + at;
		unsigned sum = 0;
		memset(h + 148, ' ', 8);
		for (int i = 0; i < 512; i++)
			sum += h[i];
		snprintf((char *)h + 148, 8, "%06o", sum & 0777777);
		h[155] = ' ';
		char octal[13];
		memcpy(octal, h + 124, 12);
		octal[12] = '\0';
		char *end;
		unsigned long long len = strtoull(octal, &end, 8);
		if (end == octal || len > size)
			return;
		at += 512 + (size_t)((len + 511) / 512 * 512);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	uint8_t *data = malloc(size ? size : 1);
	REQUIRE(data, "out of memory");
	memcpy(data, input, size);
	bool compressed = size >= 4 &&
		((data[0] == 0x1f && data[1] == 0x8b) || memcmp(data, "\x28\xb5\x2f\xfd", 4) == 0);
	if (!compressed)
		fix_checksums(data, size);
	setup();
	int fuzzer_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	REQUIRE(fuzzer_cwd >= 0 && chdir(cwd_dir) == 0, "cannot enter %s", cwd_dir);
	REQUIRE(mkdir(run_dir, 0755) == 0 && mkdir(root, 0755) == 0 && mkdir(outside_dir, 0755) == 0,
		"cannot make %s", run_dir);
	FILE *f = fopen(outside_file, "w");
	REQUIRE(f && fputs(SENTINEL, f) >= 0 && fclose(f) == 0, "cannot write %s", outside_file);
	char blob[700];
	snprintf(blob, sizeof blob, "%s/blob", base);
	int fd = open(blob, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	REQUIRE(fd >= 0 && (size == 0 || write(fd, data, size) == (ssize_t)size) && close(fd) == 0,
		"cannot write %s", blob);
	struct stat file_before, dir_before, here_before, etc_before;
	REQUIRE(lstat(outside_file, &file_before) == 0 && lstat(outside_dir, &dir_before) == 0 &&
			lstat(".", &here_before) == 0 && lstat("etc", &etc_before) == 0,
		"lstat");
	char cwd_before[4096], cwd_after[4096];
	REQUIRE(getcwd(cwd_before, sizeof cwd_before), "getcwd");
	int fds = count_fds();

	struct images_unpack_stats st;
	struct err why;
	memset(&why, 0x55, sizeof why);
	int rc = images_unpack_layer(blob, root, NULL, MAX_TAR, &st, &why);
	unlink(blob);

	REQUIRE(rc == 0 || rc == -1, "unpack returned %d", rc);
	if (rc != 0)
		REQUIRE(memchr(why.msg, '\0', sizeof why.msg) && why.msg[0], "a refusal without a reason");
	REQUIRE(getcwd(cwd_after, sizeof cwd_after) && strcmp(cwd_before, cwd_after) == 0,
		"the cwd moved to %s", cwd_after);
	REQUIRE(count_fds() == fds, "descriptors leaked: %d before, %d after", fds, count_fds());
	char names[4096];
	listing(base, names, sizeof names);
	REQUIRE(strcmp(names, "cwd/run/") == 0, "written beside the layer's parent: %s", names);
	listing(".", names, sizeof names);
	REQUIRE(strcmp(names, "etc/") == 0, "written into the working directory: %s", names);
	listing("etc", names, sizeof names);
	REQUIRE(names[0] == '\0', "written into the working directory's etc: %s", names);
	REQUIRE(same_inode_state(".", &here_before) && same_inode_state("etc", &etc_before),
		"the working directory or its etc changed (mode, owner or times)");
	listing(run_dir, names, sizeof names);
	REQUIRE(strcmp(names, "outside/outside.txt/root/") == 0, "written beside the layer's root: %s",
		names);
	listing(outside_dir, names, sizeof names);
	REQUIRE(names[0] == '\0', "written into a directory outside the layer: %s", names);
	struct stat file_after, dir_after;
	REQUIRE(lstat(outside_file, &file_after) == 0 && lstat(outside_dir, &dir_after) == 0, "lstat");
	REQUIRE(file_after.st_mode == file_before.st_mode && file_after.st_uid == file_before.st_uid &&
			file_after.st_gid == file_before.st_gid &&
			file_after.st_size == file_before.st_size &&
			file_after.st_mtim.tv_nsec == file_before.st_mtim.tv_nsec &&
			file_after.st_mtim.tv_sec == file_before.st_mtim.tv_sec,
		"a file outside the layer changed");
	REQUIRE(dir_after.st_mode == dir_before.st_mode && dir_after.st_uid == dir_before.st_uid &&
			dir_after.st_gid == dir_before.st_gid,
		"a directory outside the layer changed");
	f = fopen(outside_file, "r");
	char text[64] = "";
	REQUIRE(f && fgets(text, sizeof text, f), "cannot read %s", outside_file);
	fclose(f);
	REQUIRE(strcmp(text, SENTINEL) == 0, "a file outside the layer was written: %s", text);

	if (rc == 0) {
		char expected[72];
		REQUIRE(strlen(st.diff_id) == 71 && strncmp(st.diff_id, "sha256:", 7) == 0, "diff id '%.80s'",
			st.diff_id);
		REQUIRE(oracle(data, size, expected) == 0, "unpacked what does not decompress (%s)",
			st.diff_id);
		REQUIRE(strcmp(expected, st.diff_id) == 0, "reported %s, the stream is %s", st.diff_id,
			expected);
		REQUIRE(st.tar_bytes <= MAX_TAR, "%llu bytes past the limit",
			(unsigned long long)st.tar_bytes);
	}
	remove_tree(run_dir);
	free(data);
	REQUIRE(fchdir(fuzzer_cwd) == 0 && close(fuzzer_cwd) == 0,
		"cannot go back to the fuzzer's directory");
	return 0;
}
