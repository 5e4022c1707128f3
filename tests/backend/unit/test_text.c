/* lib/text.c: UTF-8 checks and repair as Go's encoding/json does it, NUL
 * detection in JSON text, constant-time secret comparison, text_printf. */
#include <stdlib.h>

#include "check.h"
#include "lib/text.h"
#include "suites.h"

static void replaced_is(const char *in, size_t len, const char *want, size_t want_len)
{
	size_t n = 0;
	char *out = text_utf8_replace_invalid(in, len, &n);
	CHECK(out != NULL && n == want_len && memcmp(out, want, want_len) == 0 && out[n] == '\0');
	free(out);
}

void suite_text(void)
{
	char *s = text_printf("%s-%d", "ab", 42);
	CHECK_STR(s, "ab-42");
	free(s);

	CHECK(text_secret_equal("key", "key"));
	CHECK(!text_secret_equal("key", "kez"));
	CHECK(!text_secret_equal("key", "key2"));
	CHECK(!text_secret_equal("key2", "key"));
	CHECK(!text_secret_equal("", "k"));
	CHECK(text_secret_equal("", ""));

	CHECK(text_utf8_valid("", 0));
	CHECK(text_utf8_valid("h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10));
	CHECK(!text_utf8_valid("\xff", 1));
	CHECK(!text_utf8_valid("\xc3", 1));             /* cut short */
	CHECK(!text_utf8_valid("\xc0\xaf", 2));         /* overlong */
	CHECK(!text_utf8_valid("\xed\xa0\x80", 3));     /* a surrogate */
	CHECK(!text_utf8_valid("\xf4\x90\x80\x80", 4)); /* above U+10FFFF */
	CHECK(text_utf8_valid("a\0b", 3));              /* NUL is UTF-8 */

	/* one U+FFFD per bad byte, as Go */
	replaced_is("a\xff"
		    "b",
		3,
		"a\xef\xbf\xbd"
		"b",
		5);
	replaced_is("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6);
	replaced_is("\xe2\x82", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6);
	replaced_is("ok\xe2\x82\xac", 5, "ok\xe2\x82\xac", 5);

	CHECK(text_json_has_nul_escape("{\"a\":\"\\u0000\"}", 14));
	CHECK(text_json_has_nul_escape("{\"a\":\"x\0\"}", 10));
	CHECK(!text_json_has_nul_escape("{\"a\":\"\\\\u0000\"}", 15)); /* an escaped backslash, then text */
	CHECK(!text_json_has_nul_escape("{\"a\":\"\\u0001\"}", 14));
}
