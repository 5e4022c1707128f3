#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "suites.h"

void suite_errors(void)
{
	CHECK_NUM(e2bw_error_code(E2BW_ERR_NOT_FOUND), -32002);
	CHECK_NUM(e2bw_error_code(E2BW_ERR_UNSUPPORTED), -32003);
	CHECK_NUM(e2bw_error_code(E2BW_ERR_PARSE_ERROR), -32700);
	/* four different failures stay four different errors */
	int codes[] = {e2bw_error_code(E2BW_ERR_NOT_FOUND), e2bw_error_code(E2BW_ERR_UNREACHABLE),
		e2bw_error_code(E2BW_ERR_TIMEOUT), e2bw_error_code(E2BW_ERR_UNAUTHENTICATED)};
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			CHECK(codes[i] != codes[j]);
	/* every kind has a distinct name */
	for (int i = 0; i < E2BW_ERR__COUNT; i++)
		for (int j = i + 1; j < E2BW_ERR__COUNT; j++)
			CHECK(strcmp(e2bw_error_name((e2bw_error_kind)i),
				      e2bw_error_name((e2bw_error_kind)j)) != 0);

	CHECK(e2bw_error_kind_for_status(404) == E2BW_ERR_NOT_FOUND);
	CHECK(e2bw_error_kind_for_status(401) == E2BW_ERR_UNAUTHENTICATED);
	CHECK(e2bw_error_kind_for_status(503) == E2BW_ERR_UNAVAILABLE);
	CHECK(e2bw_error_kind_for_status(504) == E2BW_ERR_TIMEOUT);
	CHECK(e2bw_error_kind_for_status(500) == E2BW_ERR_BACKEND);
	CHECK(e2bw_error_kind_for_status(418) == E2BW_ERR_BACKEND);

	cJSON *e = e2bw_error_new(E2BW_ERR_UNSUPPORTED, "no %s", "files.rw");
	CHECK_STR(cJSON_GetObjectItem(e, "message")->valuestring, "no files.rw");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "data"), "kind")->valuestring, "unsupported");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "data"), "sdk_code")->valuestring, "E8004");
	e2bw_error_set_str(e, "sdk_code", "E9999");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "data"), "sdk_code")->valuestring, "E9999");
	cJSON_Delete(e);

	/* long messages are cut, not overflowed */
	char long_arg[2000];
	memset(long_arg, 'a', sizeof long_arg - 1);
	long_arg[sizeof long_arg - 1] = 0;
	e = e2bw_error_new(E2BW_ERR_BACKEND, "%s", long_arg);
	const char *m = cJSON_GetObjectItem(e, "message")->valuestring;
	CHECK(strlen(m) < 700 && strcmp(m + strlen(m) - 3, "...") == 0);
	cJSON_Delete(e);

	/* backend bytes that are not UTF-8 (or a sequence cut by %.Ns) never reach
   * the JSON: each stray byte becomes '?' */
	e = e2bw_error_new(E2BW_ERR_BACKEND, "x%sy%.1sz", "\x9c\xe0,\xc3\xa9", "\xc3\xa9");
	CHECK_STR(cJSON_GetObjectItem(e, "message")->valuestring, "x??,\xc3\xa9y?z");
	e2bw_error_set_str(e, "path", "/a\xff");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "data"), "path")->valuestring, "/a?");
	cJSON_Delete(e);
}
