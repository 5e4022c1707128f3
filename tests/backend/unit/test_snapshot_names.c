/* snapshots/snapshots_names.c (E2B's snapshot names and references) and
 * lib/hmac.c (RFC 4231 vectors: the envd, traffic and volume tokens are
 * HMACs keyed by the API key). */
#include "check.h"
#include "lib/err.h"
#include "lib/hmac.h"
#include "snapshots/snapshots_names.h"
#include "suites.h"

#include <string.h>

static void refs(void)
{
	struct snapshot_ref r;
	struct err why;
	CHECK(snapshots_ref_parse("my-snap", &r, &why) == 0);
	CHECK(strcmp(r.name, "my-snap") == 0 && strcmp(r.tag, "default") == 0 && !r.has_tag);
	CHECK(snapshots_ref_parse("my-snap:v1.2", &r, &why) == 0);
	CHECK(strcmp(r.name, "my-snap") == 0 && strcmp(r.tag, "v1.2") == 0 && r.has_tag);
	CHECK(snapshots_ref_parse("local/my_snap:V2", &r, &why) == 0);
	CHECK(strcmp(r.name, "my_snap") == 0 && strcmp(r.tag, "V2") == 0);
	CHECK(snapshots_ref_parse("abcdefghij0123456789:default", &r, &why) == 0);
	/* Refused, each with a reason. */
	const char *bad[] = {"", "other/x", "local/", "Big", "-x", "x:", "x:.hidden", "x:a/b", "a b", "x:y:z",
		"../x", "x\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err_clear(&why);
		CHECK(snapshots_ref_parse(bad[i], &r, &why) == -1);
		CHECK(why.status == 400 && why.msg[0] != '\0');
	}
	char long_name[80];
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	CHECK(snapshots_ref_parse(long_name, &r, &why) == -1);
	long_name[64] = '\0';
	CHECK(snapshots_ref_parse(long_name, &r, &why) == 0);
}

static void ids(void)
{
	char out[SNAPSHOTS_ID_TEXT_MAX];
	snapshots_id_text("my-snap", "abcdefghij0123456789", "v1", out);
	CHECK(strcmp(out, "local/my-snap:v1") == 0);
	snapshots_id_text(NULL, "abcdefghij0123456789", "default", out);
	CHECK(strcmp(out, "abcdefghij0123456789:default") == 0);
}

static void hmac(void)
{
	char out[65];
	CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?", out) == 0);
	CHECK(strcmp(out, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843") == 0);
	/* A key longer than the block is hashed first (RFC 4231 case 6). */
	char key[132];
	memset(key, 0xaa, 131);
	key[131] = '\0';
	CHECK(hmac_sha256_hex(key, "Test Using Larger Than Block-Size Key - Hash Key First", out) == 0);
	CHECK(strcmp(out, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54") == 0);
	char big[HMAC_MAX_MESSAGE + 2];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	CHECK(hmac_sha256_hex("k", big, out) == -1);
}

void suite_snapshot_names(void)
{
	refs();
	ids();
	hmac();
}
