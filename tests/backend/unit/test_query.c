/* lib/query.c: strict query strings, as Go's url.ParseQuery and
 * QueryUnescape read them (a bad escape is an error, not passed through). */
#include <stdlib.h>

#include "check.h"
#include "lib/query.h"
#include "suites.h"

static void decode_is(const char *in, bool plus, const char *want)
{
	char *got = query_percent_decode(in, strlen(in), plus);
	if (want)
		CHECK_STR(got, want);
	else
		CHECK(got == NULL);
	free(got);
}

void suite_query(void)
{
	decode_is("a%3Db%26c", false, "a=b&c");
	decode_is("a+b", true, "a b");
	decode_is("a+b", false, "a+b");
	decode_is("%e2%82%ac", false, "\xe2\x82\xac");
	decode_is("", false, "");
	decode_is("%zz", false, NULL);  /* evhttp would pass this through */
	decode_is("%4", false, NULL);   /* cut short */
	decode_is("abc%", false, NULL);
	decode_is("%00", false, NULL);  /* a NUL would cut the C string */

	/* only len bytes are read */
	char *part = query_percent_decode("abcdef", 3, false);
	CHECK_STR(part, "abc");
	free(part);

	struct query q;
	CHECK(query_parse("a=1&b=two+words&c&a=2&d=%2B", &q) == 0);
	CHECK_NUM(q.count, 5);
	CHECK_STR(query_get(&q, "a"), "1"); /* the first value */
	CHECK_STR(query_get(&q, "b"), "two words");
	CHECK_STR(query_get(&q, "c"), "");
	CHECK_STR(query_get(&q, "d"), "+");
	CHECK(query_get(&q, "missing") == NULL);
	query_free(&q);

	CHECK(query_parse(NULL, &q) == 0);
	CHECK_NUM(q.count, 0);
	CHECK(query_get(&q, "a") == NULL);
	query_free(&q);

	CHECK(query_parse("metadata=a%3Db&state=running%2Cpaused", &q) == 0);
	CHECK_STR(query_get(&q, "metadata"), "a=b");
	CHECK_STR(query_get(&q, "state"), "running,paused");
	query_free(&q);

	/* a malformed escape anywhere fails the whole query */
	CHECK(query_parse("a=1&b=%zz", &q) == -1);
	CHECK(query_parse("%zz=1", &q) == -1);
}
