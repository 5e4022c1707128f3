/* Token and v1_ signature checks for /files (see fs_files_auth.h). */
#include "envd/fs/fs_files_auth.h"

#include "http/http_head.h"
#include "lib/base64.h"
#include "lib/err.h"
#include "lib/query.h"
#include "lib/sha256.h"
#include "lib/text.h"
#include "registry/registry.h"

#include <event2/http.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "v1_..." for these inputs into out (at least 64 bytes). */
static void expected_signature(const char *path, const char *op, const char *user, const char *token,
	const char *expiration, char *out)
{
	char *raw = expiration ? text_printf("%s:%s:%s:%s:%s", path, op, user, token, expiration)
			       : text_printf("%s:%s:%s:%s", path, op, user, token);
	out[0] = '\0';
	if (!raw)
		return;
	uint8_t digest[SHA256_DIGEST_LEN];
	sha256(raw, strlen(raw), digest);
	memset(raw, 0, strlen(raw)); /* it holds the token */
	free(raw);
	char b64[64];
	size_t n = base64_encoded_len(sizeof digest);
	base64_encode(digest, sizeof digest, b64);
	while (n > 0 && b64[n - 1] == '=')
		n--;
	snprintf(out, 64, "v1_%.*s", (int)n, b64);
}

static bool is_unix_seconds(const char *s)
{
	if (!*s || strlen(s) > 18)
		return false;
	for (const char *p = *s == '-' ? s + 1 : s; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* The signature alone (no header): 0 valid, -1 with err (401). */
static int check_signature(const struct sandbox *sb, const struct query *q, const char *op, bool check_expiry,
	struct err *err)
{
	const char *sig = query_get(q, "signature");
	const char *exp = query_get(q, "signature_expiration");
	const char *path = query_get(q, "path");
	const char *user = query_get(q, "username");
	if (!sig) {
		err_set(err, 401, "missing signature query parameter");
		return -1;
	}
	if (exp && !is_unix_seconds(exp)) {
		err_set(err, 401, "invalid signature_expiration");
		return -1;
	}
	char want[64];
	expected_signature(path ? path : "", op, user ? user : "", sb->access_token, exp, want);
	if (!text_secret_equal(sig, want)) {
		err_set(err, 401, "invalid signature");
		return -1;
	}
	if (check_expiry && exp && strtoll(exp, NULL, 10) < (long long)time(NULL)) {
		err_set(err, 401, "signature is already expired");
		return -1;
	}
	return 0;
}

int files_auth_check(const struct sandbox *sb, const struct http_head *head, const struct query *q,
	const char *op, struct err *err)
{
	if (!sb->secure || !sb->access_token[0])
		return 0;
	const char *token = http_head_find(head, "X-Access-Token");
	if (token && *token) {
		if (text_secret_equal(token, sb->access_token))
			return 0;
		err_set(err, 401, "access token present in header but does not match");
		return -1;
	}
	return check_signature(sb, q, op, true, err);
}

struct sandbox *files_auth_find_signer(const struct registry *reg, const struct http_head *head)
{
	const char *op = head->method == EVHTTP_REQ_POST ? "write" : "read";
	struct query q;
	if (query_parse(http_head_query(head), &q) != 0)
		return NULL;
	struct sandbox *found = NULL;
	struct err why;
	if (query_get(&q, "signature")) {
		for (size_t i = 0; i < registry_count(reg) && !found; i++) {
			struct sandbox *sb = registry_at(reg, i);
			if (sb->state == SANDBOX_RUNNING && sb->secure && sb->access_token[0] &&
				check_signature(sb, &q, op, false, &why) == 0)
				found = sb;
		}
	}
	query_free(&q);
	return found;
}
