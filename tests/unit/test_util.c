#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "check.h"
#include "suites.h"
#include "url.h"

void suite_util(void)
{
	e2bw_buf b = {0};
	CHECK(e2bw_buf_append_str(&b, "ab") == 0);
	CHECK(e2bw_buf_append(&b, "\0c", 2) == 0);
	CHECK_NUM(b.len, 4);
	CHECK(memcmp(b.data, "ab\0c", 5) == 0); /* binary-safe, NUL kept after */
	for (int i = 0; i < 1000; i++)
		e2bw_buf_append_char(&b, 'x');
	CHECK_NUM(b.len, 1004);
	e2bw_buf_reset(&b);
	CHECK_NUM(b.len, 0);
	CHECK_STR(b.data, "");
	size_t n;
	e2bw_buf_append_str(&b, "take");
	char *taken = e2bw_buf_take(&b, &n);
	CHECK_STR(taken, "take");
	CHECK_NUM(n, 4);
	CHECK(b.data == NULL && b.len == 0);
	free(taken);

	e2bw_buf u = {0};
	e2bw_url_encode_str(&u, "a b/c?d=e&f~g.h_i-j%\xc3\xa9");
	CHECK_STR(u.data, "a%20b%2Fc%3Fd%3De%26f~g.h_i-j%25%C3%A9");
	e2bw_buf_free(&u);
	e2bw_buf_free(&b);
}
