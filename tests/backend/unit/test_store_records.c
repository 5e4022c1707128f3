/* store/store_records.c: records written atomically, read back, listed, and
 * garbage beside them ignored (with a line on stderr). */
#include "check.h"
#include "lib/tree_remove.h"
#include "store/store_records.h"
#include "suites.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_file(const char *root, const char *name, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/records/snapshots/%s", root, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
		close(fd);
	}
}

struct seen {
	int count;
	int a_value;
	char ids[256];
};

static int collect(void *ctx, const char *id, cJSON *record)
{
	struct seen *s = ctx;
	s->count++;
	strncat(s->ids, id, sizeof s->ids - strlen(s->ids) - 2);
	strcat(s->ids, " ");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(record, "v");
	if (strcmp(id, "a") == 0 && cJSON_IsNumber(v))
		s->a_value = v->valueint;
	cJSON_Delete(record);
	return 0;
}

static int stop_at_first(void *ctx, const char *id, cJSON *record)
{
	(void)id;
	cJSON_Delete(record);
	(*(int *)ctx)++;
	return 1;
}

static cJSON *record_with(int v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "v", v);
	return o;
}

void suite_store_records(void)
{
	char root[] = "/tmp/store-records-test.XXXXXX";
	CHECK(mkdtemp(root) != NULL);

	/* Names: one path element, no leading dot. */
	CHECK(store_name_valid("abc-1.2_x:y"));
	CHECK(!store_name_valid(""));
	CHECK(!store_name_valid(".hidden"));
	CHECK(!store_name_valid("a/b"));
	CHECK(!store_name_valid(".."));
	CHECK(!store_name_valid(NULL));

	/* A kind with no records yet: none, not an error. */
	struct seen s = {0};
	CHECK_NUM(store_records_each(root, "snapshots", collect, &s), 0);
	CHECK(store_records_read(root, "snapshots", "a") == NULL && errno == ENOENT);

	/* Written, read back, overwritten: the new one; no .tmp stays; synced
	 * or not, a reader sees the same. */
	cJSON *one = record_with(1), *two = record_with(2);
	char path[512];
	for (int sync = STORE_VOLATILE; sync <= STORE_DURABLE; sync++) {
		CHECK_NUM(store_records_write(root, "snapshots", "a", one, (enum store_sync)sync), 0);
		cJSON *back = store_records_read(root, "snapshots", "a");
		CHECK(back && cJSON_Compare(back, one, 1));
		cJSON_Delete(back);
		CHECK_NUM(store_records_write(root, "snapshots", "a", two, (enum store_sync)sync), 0);
		back = store_records_read(root, "snapshots", "a");
		CHECK(back && cJSON_Compare(back, two, 1));
		cJSON_Delete(back);
		snprintf(path, sizeof path, "%s/records/snapshots/a.json.tmp", root);
		CHECK(access(path, F_OK) != 0);
	}
	cJSON *back;
	CHECK_NUM(store_records_write(root, "snapshots", "b", one, STORE_DURABLE), 0);

	/* Bad names are refused before anything touches the disk. */
	CHECK(store_records_write(root, "snapshots", "../x", one, STORE_VOLATILE) == -1 && errno == EINVAL);
	CHECK(store_records_write(root, "../x", "a", one, STORE_DURABLE) == -1 && errno == EINVAL);

	/* Garbage beside the records (a crash's .tmp, a half-written record,
	 * JSON that is no object, a stray name) is skipped, the rest is read. */
	put_file(root, "c.json.tmp", "{\"v\":");
	put_file(root, "d.json", "{\"v\":");
	put_file(root, "e.json", "[1,2]");
	put_file(root, "notes.txt", "hello");
	put_file(root, ".json", "{}");
	memset(&s, 0, sizeof s);
	fprintf(stderr, "  (five lines about ignored records are expected next)\n");
	CHECK_NUM(store_records_each(root, "snapshots", collect, &s), 2);
	CHECK_NUM(s.count, 2);
	CHECK_NUM(s.a_value, 2);
	CHECK(strstr(s.ids, "a ") != NULL && strstr(s.ids, "b ") != NULL);
	CHECK(store_records_read(root, "snapshots", "d") == NULL && errno == EINVAL);

	/* A callback can stop the walk. */
	int calls = 0;
	CHECK_NUM(store_records_each(root, "snapshots", stop_at_first, &calls), 1);
	CHECK_NUM(calls, 1);

	/* Deleted: gone; deleting again is no error. */
	CHECK_NUM(store_records_delete(root, "snapshots", "a", STORE_DURABLE), 0);
	CHECK(store_records_read(root, "snapshots", "a") == NULL && errno == ENOENT);
	CHECK_NUM(store_records_delete(root, "snapshots", "a", STORE_VOLATILE), 0);
	CHECK_NUM(store_records_write(root, "snapshots", "a", one, STORE_VOLATILE), 0);
	CHECK_NUM(store_records_delete(root, "snapshots", "a", STORE_VOLATILE), 0);
	CHECK(store_records_read(root, "snapshots", "a") == NULL && errno == ENOENT);

	/* A write that fails before its rename leaves the old record whole:
	 * here its temporary file cannot be made. */
	snprintf(path, sizeof path, "%s/records/snapshots/b.json.tmp", root);
	CHECK_NUM(mkdir(path, 0700), 0);
	CHECK(store_records_write(root, "snapshots", "b", two, STORE_DURABLE) == -1);
	back = store_records_read(root, "snapshots", "b");
	CHECK(back && cJSON_Compare(back, one, 1));
	cJSON_Delete(back);

	cJSON_Delete(one);
	cJSON_Delete(two);
	CHECK_NUM(tree_remove(root), 0);
}
