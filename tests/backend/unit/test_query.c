/* lib/query.c: strict query strings, as Go's url.ParseQuery and
 * QueryUnescape read them (a bad escape is an error, not passed through). */
#include <limits.h>
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
	decode_is("%zz", false, NULL); /* evhttp would pass this through */
	decode_is("%4", false, NULL);  /* cut short */
	decode_is("abc%", false, NULL);
	decode_is("%00", false, NULL); /* a NUL would cut the C string */

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

	/* numbers: digits only, within their range; absent leaves the default */
	CHECK(query_parse("n=42&zero=0&big=123456789012345678&huge=1234567890123456789&e=&sp=%205&plus=%2B5"
			  "&neg=-1&hex=0x10&tail=5x&lead=05",
		      &q) == 0);
	long long v = 7;
	CHECK(query_number(&q, "missing", 0, 100, &v) == 0 && v == 7);
	CHECK(query_number(&q, "n", 0, 100, &v) == 1 && v == 42);
	CHECK(query_number(&q, "zero", 0, 100, &v) == 1 && v == 0);
	CHECK(query_number(&q, "zero", 1, 100, &v) == -1);
	CHECK(query_number(&q, "n", 0, 41, &v) == -1);
	CHECK(query_number(&q, "big", 0, LLONG_MAX, &v) == 1 && v == 123456789012345678LL);
	CHECK(query_number(&q, "lead", 0, 100, &v) == 1 && v == 5);
	const char *bad[] = {"huge", "e", "sp", "plus", "neg", "hex", "tail"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		v = 7;
		CHECK(query_number(&q, bad[i], 0, LLONG_MAX, &v) == -1 && v == 7);
	}
	query_free(&q);
}
