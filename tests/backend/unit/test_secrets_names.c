/* secrets/secrets_names.c: what a secret's name may be, its canonical
 * form, and the identifiers no name can take. */
#include "check.h"
#include "lib/err.h"
#include "secrets/secrets_names.h"
#include "suites.h"

#include <string.h>

void suite_secrets_names(void)
{
	char out[SECRETS_NAME_MAX + 1];
	CHECK(secrets_names_canonical("OpenAI-Key", out, NULL) == 0);
	CHECK_STR(out, "openai-key");
	CHECK(secrets_names_canonical("a.b_c-9", out, NULL) == 0);
	CHECK_STR(out, "a.b_c-9");
	CHECK(secrets_names_canonical("9lives", out, NULL) == 0);
	CHECK(secrets_names_canonical("sec", out, NULL) == 0); /* only "sec_" is reserved */
	CHECK(secrets_names_canonical("secret_x", out, NULL) == 0);

	char longest[SECRETS_NAME_MAX + 2];
	memset(longest, 'N', SECRETS_NAME_MAX);
	longest[SECRETS_NAME_MAX] = '\0';
	CHECK(secrets_names_canonical(longest, out, NULL) == 0);
	CHECK(strlen(out) == SECRETS_NAME_MAX && out[0] == 'n');
	longest[SECRETS_NAME_MAX] = 'n';
	longest[SECRETS_NAME_MAX + 1] = '\0';
	CHECK(secrets_names_canonical(longest, out, NULL) == -1);

	/* Refused, each with a reason that never quotes the name. */
	const char *bad[] = {"", "sec_x", "SEC_X", "Sec_", "-x", ".x", "_x", "a b", "a{b", "a}b", "a/b",
		"a\nb", "na\xc3\xafve", "a:b", "a$b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct err why;
		err_clear(&why);
		CHECK(secrets_names_canonical(bad[i], out, &why) == -1);
		CHECK_NUM(why.status, 400);
		CHECK(why.msg[0] != '\0');
		CHECK(!bad[i][0] || !strstr(why.msg, bad[i]));
	}

	char id[SECRETS_ID_LEN + 1], other[SECRETS_ID_LEN + 1];
	CHECK(secrets_names_new_id(id) == 0 && secrets_names_new_id(other) == 0);
	CHECK(strlen(id) == 24 && strncmp(id, "sec_", 4) == 0);
	CHECK(secrets_names_is_id(id));
	CHECK(strcmp(id, other) != 0);
	/* An ID is never a name: the reserved prefix keeps them apart. */
	CHECK(secrets_names_canonical(id, out, NULL) == -1);
	const char *not_ids[] = {"", "sec_", "sec_abc", "sec_ABCDEFGHIJ0123456789",
		"abc_0123456789abcdefghij", "sec_0123456789abcdefghijk", "sec_0123456789abcdefgh-j"};
	for (size_t i = 0; i < sizeof not_ids / sizeof not_ids[0]; i++)
		CHECK(!secrets_names_is_id(not_ids[i]));
	CHECK(secrets_names_is_id("sec_0123456789abcdefghij"));
}
