/* api/api_list_cursor.c: GET /v2/sandboxes' nextToken, URL-safe base64 of
 * "<startedAt>__<id>[__asc]" as E2B makes it. */
#include <stdlib.h>
#include <string.h>

#include "api/api_list_cursor.h"
#include "check.h"
#include "suites.h"

static int decode(const char *token, struct list_cursor *c)
{
	memset(c, 0, sizeof *c);
	return list_cursor_decode(token, c);
}

void suite_list_cursor(void)
{
	struct list_cursor c = {.started_at_ms = 1767323045678LL, .id = "i5x2abc", .ascending = false};
	char *token = list_cursor_encode(&c);
	/* base64url("2026-01-02T03:04:05.678Z__i5x2abc") */
	CHECK_STR(token, "MjAyNi0wMS0wMlQwMzowNDowNS42NzhaX19pNXgyYWJj");
	struct list_cursor back;
	CHECK(decode(token, &back) == 0);
	CHECK_NUM(back.started_at_ms, c.started_at_ms);
	CHECK_STR(back.id, "i5x2abc");
	CHECK(!back.ascending);
	free(token);

	c.ascending = true;
	token = list_cursor_encode(&c);
	CHECK(decode(token, &back) == 0);
	CHECK(back.ascending);
	CHECK_STR(back.id, "i5x2abc");
	/* padding is optional */
	size_t n = strlen(token);
	while (n && token[n - 1] == '=')
		token[--n] = '\0';
	CHECK(decode(token, &back) == 0);
	free(token);

	/* E2B's own form, and the '-'/'_' of the URL-safe alphabet */
	struct list_cursor odd = {.started_at_ms = 0, .id = "zz", .ascending = false};
	token = list_cursor_encode(&odd);
	CHECK(decode(token, &back) == 0 && back.started_at_ms == 0);
	free(token);

	/* A secret's ID (one inner '_'), in ascending order as GET /secrets pages. */
	struct list_cursor sec = {.started_at_ms = 1767323045678LL,
		.id = "sec_0a1b2c3d4e5f6g7h8i9j",
		.ascending = true};
	token = list_cursor_encode(&sec);
	CHECK(decode(token, &back) == 0);
	CHECK_STR(back.id, "sec_0a1b2c3d4e5f6g7h8i9j");
	CHECK(back.ascending && back.started_at_ms == sec.started_at_ms);
	free(token);
	const char *bad_ids[] = {"_lead", "trail_", "a__b"};
	for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
		struct list_cursor w = {.started_at_ms = 0, .ascending = false};
		strcpy(w.id, bad_ids[i]);
		token = list_cursor_encode(&w);
		CHECK(decode(token, &back) == -1);
		free(token);
	}

	/* The limit parameter both lists take. */
	long limit = 7;
	CHECK(list_cursor_limit(NULL, &limit) == 0 && limit == 7);
	CHECK(list_cursor_limit("1", &limit) == 0 && limit == 1);
	CHECK(list_cursor_limit("100", &limit) == 0 && limit == LIST_LIMIT_MAX);
	const char *bad_limits[] = {"", "0", "101", "-1", "5x", " 5", "1e2"};
	for (size_t i = 0; i < sizeof bad_limits / sizeof bad_limits[0]; i++)
		CHECK(list_cursor_limit(bad_limits[i], &limit) == -1);

	const char *bad[] = {
		"", "!!!!", "MjAyNi0wMS0wMlQwMzowNDowNS42Nzha",   /* no "__<id>" */
		"MjAyNi0wMS0wMlQwMzowNDowNS42NzhaX18",            /* empty id */
		"bm90IGEgdGltZV9faWQ",                            /* "not a time__id" */
		"MjAyNi0wMS0wMlQwMzowNDowNS42NzhaX19JRA",         /* upper-case id */
		"MjAyNi0wMS0wMlQwMzowNDowNS42NzhaX19pZF9fZGVzYw", /* "__desc" */
		"MjAyNi0wMS0wMlQwMzowNDowNS42NzhaX19pZAA",        /* a NUL inside */
		"A",                                              /* a length base64 cannot have */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (decode(bad[i], &back) != -1)
			fprintf(stderr, "  accepted: '%s'\n", bad[i]);
		CHECK(decode(bad[i], &back) == -1);
	}
	/* longer than any token we make */
	char big[400];
	memset(big, 'A', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK(decode(big, &back) == -1);
}
