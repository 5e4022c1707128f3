/* lib/err.c: setting, cutting and wrapping the one error type. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "lib/err.h"
#include "suites.h"

static int fails_with_status(struct err *e)
{
	return err_set(e, 404, "no sandbox %s (%d left)", "sb-1", 3);
}

void suite_err(void)
{
	struct err e;
	CHECK(fails_with_status(&e) == -1);
	CHECK_NUM(e.status, 404);
	CHECK_STR(e.msg, "no sandbox sb-1 (3 left)");

	/* context goes in front, the status stays */
	CHECK(err_wrap(&e, "pull %s", "alpine") == -1);
	CHECK_NUM(e.status, 404);
	CHECK_STR(e.msg, "pull alpine: no sandbox sb-1 (3 left)");
	CHECK(err_wrap(&e, "start") == -1);
	CHECK_STR(e.msg, "start: pull alpine: no sandbox sb-1 (3 left)");

	err_clear(&e);
	CHECK_NUM(e.status, 0);
	CHECK_STR(e.msg, "");
	err_wrap(&e, "context");
	CHECK_STR(e.msg, "context: ");

	/* NULL: nothing written, still -1 */
	CHECK(err_set(NULL, EIO, "x") == -1);
	CHECK(err_wrap(NULL, "x") == -1);
	err_clear(NULL);

	/* a message longer than the buffer is cut, NUL-terminated */
	char *big = malloc(ERR_MSG_MAX * 2);
	CHECK(big != NULL);
	if (!big)
		return;
	memset(big, 'a', ERR_MSG_MAX * 2 - 1);
	big[ERR_MSG_MAX * 2 - 1] = '\0';
	err_set(&e, EIO, "%s", big);
	CHECK_NUM(strlen(e.msg), ERR_MSG_MAX - 1);
	CHECK_NUM(e.status, EIO);

	/* wrapping a full message keeps the prefix and cuts the old tail */
	err_wrap(&e, "ctx");
	CHECK_NUM(strlen(e.msg), ERR_MSG_MAX - 1);
	CHECK(memcmp(e.msg, "ctx: aaa", 8) == 0);

	/* a prefix longer than the buffer fills it alone */
	err_set(&e, 1, "tail");
	err_wrap(&e, "%s", big);
	CHECK_NUM(strlen(e.msg), ERR_MSG_MAX - 1);
	CHECK(e.msg[0] == 'a' && e.msg[ERR_MSG_MAX - 2] == 'a');

	/* a prefix one or two bytes short of the room: as much of ": " as fits */
	big[ERR_MSG_MAX - 2] = '\0';
	err_set(&e, 1, "tail");
	err_wrap(&e, "%s", big);
	CHECK_NUM(strlen(e.msg), ERR_MSG_MAX - 1);
	CHECK(e.msg[ERR_MSG_MAX - 2] == ':');
	free(big);
}
