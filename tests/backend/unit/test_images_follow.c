/* images/images_follow.c: layers unpacked while "skopeo" writes them. The
 * test plays skopeo's part as containers/image 5.23's oci/layout PutBlob
 * does it (an oci-put-blob<random> file in the layout, written in pieces,
 * fsynced, closed, then renamed to blobs/sha256/<digest>, or removed when
 * the download fails) and checks what the followers made: a layer unpacked
 * while its file still grows, two blobs at once, and nothing taken from a
 * removed blob, a cut one, a wrong diff id, a blob that is no tar, another
 * file put where skopeo's blob would be, or when skopeo failed. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "images/images_follow.h"
#include "lib/tree_remove.h"
#include "suites.h"

struct blob {
	unsigned char *data;
	size_t len;
	char digest[72], diff_id[72];
};

static void sha256_text(const void *data, size_t len, char out[72])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	EVP_Digest(data, len, d, &n, EVP_sha256(), NULL);
	strcpy(out, "sha256:");
	for (unsigned i = 0; i < 32; i++)
		sprintf(out + 7 + 2 * i, "%02x", d[i]);
}

/* A tar of two files, small "first" and a larger "second" (bytes that do
 * not compress), gzip-compressed or not. */
static struct blob make_blob(const char *tag, bool gzip)
{
	static unsigned char second[256 << 10];
	uint64_t x = 0x9e3779b97f4a7c15u ^ (unsigned char)tag[0]; /* xorshift64 */
	for (size_t i = 0; i < sizeof second; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		second[i] = (unsigned char)x;
	}
	struct blob b = {.data = malloc(1 << 20)};
	for (int pass = 0; pass < 2; pass++) {
		struct archive *a = archive_write_new();
		size_t used = 0;
		archive_write_set_format_pax_restricted(a);
		if (pass == 1 && gzip)
			archive_write_add_filter_gzip(a);
		archive_write_set_bytes_in_last_block(a, 1);
		CHECK(archive_write_open_memory(a, b.data, 1 << 20, &used) == ARCHIVE_OK);
		const char *names[] = {"first", "second"};
		const void *bodies[] = {tag, second};
		const size_t sizes[] = {strlen(tag), sizeof second};
		for (int i = 0; i < 2; i++) {
			struct archive_entry *e = archive_entry_new();
			archive_entry_set_pathname(e, names[i]);
			archive_entry_set_filetype(e, AE_IFREG);
			archive_entry_set_perm(e, 0644);
			archive_entry_set_size(e, (la_int64_t)sizes[i]);
			CHECK(archive_write_header(a, e) == ARCHIVE_OK);
			CHECK(archive_write_data(a, bodies[i], sizes[i]) == (la_ssize_t)sizes[i]);
			archive_entry_free(e);
		}
		archive_write_close(a);
		archive_write_free(a);
		b.len = used;
		if (pass == 0)
			sha256_text(b.data, b.len, b.diff_id);
	}
	sha256_text(b.data, b.len, b.digest);
	return b;
}

/* skopeo's temporary file, made and announced to the followers. */
static int put_blob_open(struct images_follow *f, const char *layout, const char *name)
{
	char path[400];
	snprintf(path, sizeof path, "%s/%s", layout, name);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	images_follow_events(f);
	return fd;
}

static void put_blob_write(int fd, const struct blob *b, size_t from, size_t to)
{
	CHECK(write(fd, b->data + from, to - from) == (ssize_t)(to - from));
}

/* Success: synced, closed, renamed to blobs/sha256/<hex>. Failure: closed
 * and removed. */
static void put_blob_end(int fd, const char *layout, const char *name, const struct blob *b, bool ok)
{
	char from[400], to[400];
	snprintf(from, sizeof from, "%s/%s", layout, name);
	snprintf(to, sizeof to, "%s/blobs/sha256/%s", layout, b->digest + 7);
	CHECK(fsync(fd) == 0 && close(fd) == 0);
	CHECK(ok ? rename(from, to) == 0 : unlink(from) == 0);
}

/* Where skopeo put it: blobs/sha256/<hex> (a static buffer). */
static const char *blob_at(const char *layout, const struct blob *b)
{
	static char path[400];
	snprintf(path, sizeof path, "%s/blobs/sha256/%s", layout, b->digest + 7);
	return path;
}

/* Whether some <scratch>/follow-*<rel> holds text, within 10 s. */
static bool follower_made(const char *scratch, const char *rel, const char *text)
{
	struct timespec pause = {0, 5 * 1000 * 1000};
	for (int tries = 0; tries < 2000; tries++, nanosleep(&pause, NULL)) {
		DIR *d = opendir(scratch);
		struct dirent *e;
		bool found = false;
		while (d && !found && (e = readdir(d))) {
			char path[600], got[64] = "";
			snprintf(path, sizeof path, "%s/%s%s", scratch, e->d_name, rel);
			FILE *fp = strncmp(e->d_name, "follow-", 7) == 0 ? fopen(path, "r") : NULL;
			if (fp) {
				found = fgets(got, sizeof got, fp) && strcmp(got, text) == 0;
				fclose(fp);
			}
		}
		if (d)
			closedir(d);
		if (found)
			return true;
	}
	return false;
}

static bool file_is(const char *dir, const char *rel, const char *text)
{
	char path[600], got[64] = "";
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	FILE *fp = fopen(path, "r");
	bool same = fp && fgets(got, sizeof got, fp) && strcmp(got, text) == 0;
	if (fp)
		fclose(fp);
	return same;
}

static void follow_cases(void)
{
	char scratch[] = "/tmp/e2bw-follow-XXXXXX", layout[200], blobs[300];
	CHECK(mkdtemp(scratch) != NULL);
	snprintf(layout, sizeof layout, "%s/oci", scratch);
	snprintf(blobs, sizeof blobs, "%s/blobs", layout);
	CHECK(mkdir(layout, 0700) == 0 && mkdir(blobs, 0700) == 0);
	strcat(blobs, "/sha256");
	CHECK(mkdir(blobs, 0700) == 0);
	struct images_follow *f = images_follow_start(layout, scratch, 64 << 20);
	CHECK(f != NULL);
	if (!f)
		return;
	struct blob one = make_blob("one\n", true), two = make_blob("two\n", false);
	struct blob gone = make_blob("gone\n", true), cut = make_blob("cut\n", true);

	/* Two blobs at once, each unpacked while it grows: "first" is on disk
	 * before the rest of the blob is written. */
	int fd1 = put_blob_open(f, layout, "oci-put-blob111");
	int fd2 = put_blob_open(f, layout, "oci-put-blob222");
	put_blob_write(fd1, &one, 0, one.len / 2);
	put_blob_write(fd2, &two, 0, two.len / 2);
	CHECK(follower_made(scratch, "/root/first", "one\n"));
	CHECK(follower_made(scratch, "/root/first", "two\n"));
	put_blob_write(fd1, &one, one.len / 2, one.len);
	put_blob_write(fd2, &two, two.len / 2, two.len);
	/* One that fails halfway (skopeo removes it), one cut short but
	 * renamed (its follower finds the gzip stream cut), one that is no tar
	 * (a config). */
	int fd3 = put_blob_open(f, layout, "oci-put-blob333");
	int fd4 = put_blob_open(f, layout, "oci-put-blob444");
	int fd5 = put_blob_open(f, layout, "oci-put-blob555");
	put_blob_write(fd3, &gone, 0, gone.len / 2);
	put_blob_write(fd4, &cut, 0, cut.len - 100);
	CHECK(write(fd5, "{\"architecture\":\"amd64\"}", 24) == 24);
	put_blob_end(fd1, layout, "oci-put-blob111", &one, true);
	put_blob_end(fd2, layout, "oci-put-blob222", &two, true);
	put_blob_end(fd3, layout, "oci-put-blob333", &gone, false);
	put_blob_end(fd4, layout, "oci-put-blob444", &cut, true);
	struct blob config = {.data = (unsigned char *)"{\"architecture\":\"amd64\"}", .len = 24};
	sha256_text(config.data, config.len, config.digest);
	put_blob_end(fd5, layout, "oci-put-blob555", &config, true);
	/* The right bytes under the blob's name, but not the file the
	 * follower read: not taken. */
	struct blob copy = make_blob("copy\n", true);
	int fd8 = put_blob_open(f, layout, "oci-put-blob888");
	put_blob_write(fd8, &copy, 0, copy.len);
	CHECK(follower_made(scratch, "/root/first", "copy\n")); /* it has the file open */
	put_blob_end(fd8, layout, "oci-put-blob888", &copy, true);
	char moved[400];
	snprintf(moved, sizeof moved, "%s.moved", blob_at(layout, &copy));
	CHECK(rename(blob_at(layout, &copy), moved) == 0);
	int fd9 = open(blob_at(layout, &copy), O_WRONLY | O_CREAT | O_EXCL, 0644);
	put_blob_write(fd9, &copy, 0, copy.len);
	close(fd9);

	images_follow_end(f, true);

	struct images_unpack_stats st;
	CHECK(images_follow_take(f, blob_at(layout, &one), two.diff_id, &st) ==
		NULL); /* another layer's diff id */
	const char *dir1 = images_follow_take(f, blob_at(layout, &one), one.diff_id, &st);
	CHECK(dir1 && file_is(dir1, "root/first", "one\n") && st.entries == 2 &&
		strcmp(st.diff_id, one.diff_id) == 0);
	CHECK(images_follow_take(f, blob_at(layout, &one), one.diff_id, &st) == NULL); /* taken once */
	const char *dir2 = images_follow_take(f, blob_at(layout, &two), two.diff_id, &st);
	CHECK(dir2 && file_is(dir2, "root/first", "two\n") && st.tar_bytes == two.len);
	CHECK(images_follow_take(f, blob_at(layout, &gone), gone.diff_id, &st) == NULL);
	CHECK(images_follow_take(f, blob_at(layout, &cut), cut.diff_id, &st) == NULL);
	CHECK(images_follow_take(f, blob_at(layout, &config), config.digest, &st) == NULL);
	CHECK(images_follow_take(f, blob_at(layout, &copy), copy.diff_id, &st) == NULL);
	CHECK(images_follow_take(f, moved, copy.diff_id, &st) != NULL); /* the file it did read */
	images_follow_free(f);

	/* skopeo failed: nothing is taken, even a complete blob. */
	struct blob again = make_blob("again\n", true);
	f = images_follow_start(layout, scratch, 64 << 20);
	CHECK(f != NULL);
	int fd6 = put_blob_open(f, layout, "oci-put-blob666");
	put_blob_write(fd6, &again, 0, again.len);
	CHECK(follower_made(scratch, "/root/first", "again\n"));
	put_blob_end(fd6, layout, "oci-put-blob666", &again, true);
	images_follow_end(f, false);
	CHECK(images_follow_take(f, blob_at(layout, &again), again.diff_id, &st) == NULL);
	images_follow_free(f);

	/* Past the limit on what all of them unpack together. */
	struct blob big = make_blob("big\n", true);
	f = images_follow_start(layout, scratch, 64 << 10);
	int fd7 = put_blob_open(f, layout, "oci-put-blob777");
	put_blob_write(fd7, &big, 0, big.len);
	put_blob_end(fd7, layout, "oci-put-blob777", &big, true);
	images_follow_end(f, true);
	CHECK(images_follow_take(f, blob_at(layout, &big), big.diff_id, &st) == NULL);
	images_follow_free(f);

	free(one.data);
	free(two.data);
	free(gone.data);
	free(cut.data);
	free(again.data);
	free(big.data);
	free(copy.data);
	tree_remove(scratch);
}

void suite_images_follow(void)
{
	follow_cases();
}
