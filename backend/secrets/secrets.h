/* secrets/ — E2B's secrets: named, write-only values with metadata and a
 * version number, kept for the control plane's /secrets routes.
 * Owns: the secrets (id, canonical name, metadata, current version, times
 * and the current value), their limits (name, value and metadata sizes,
 * how many a backend holds), and their records (records/secrets/<id>.json,
 * mode 0600, written atomically and synced) when the state directory
 * outlives the backend. A value is never handed out: nothing here returns
 * it but secrets_value, for the egress proxy of transform rules, which
 * puts a value into a request leaving a sandbox (Secret.fill's
 * placeholders, net/net_egress.h), never into the sandbox; a value is wiped
 * from memory when it is replaced or deleted.
 * May call: store/ (records), lib/. */
#ifndef E2B_BACKEND_SECRETS_H
#define E2B_BACKEND_SECRETS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct cJSON;
struct secrets;

#define SECRETS_ID_PREFIX "sec_"
#define SECRETS_ID_RANDOM_LEN 20 /* lower-case alphanumerics after the prefix */
#define SECRETS_ID_LEN (sizeof SECRETS_ID_PREFIX - 1 + SECRETS_ID_RANDOM_LEN)
#define SECRETS_NAME_MAX 128
#define SECRETS_VALUE_MAX (64 * 1024)
#define SECRETS_MAX_COUNT 1000
/* E2B's SecretMetadata: at most 32 entries, keys 128 bytes, values 1024,
 * 8192 bytes in total. */
#define SECRETS_METADATA_MAX_KEYS 32
#define SECRETS_METADATA_MAX_KEY_BYTES 128
#define SECRETS_METADATA_MAX_VALUE_BYTES 1024
#define SECRETS_METADATA_MAX_TOTAL_BYTES 8192

/* What a caller may read of a secret: everything but its value. */
struct secret {
	char id[SECRETS_ID_LEN + 1];
	char name[SECRETS_NAME_MAX + 1]; /* canonical: lower-cased */
	struct cJSON *metadata;          /* an object of strings, {} when unset */
	int64_t version;                 /* 1 at create, +1 per update */
	int64_t created_ms, updated_ms;
};

/* Refusals are a struct err (lib/err.h) whose status is 400 bad name or
 * value, 403 too many secrets, 404 unknown, 409 name taken, 500 otherwise.
 * The message never holds a value. */

/* state_root NULL: secrets live in memory only. Otherwise the records of
 * earlier runs are read back (a record that is not one is skipped with a
 * line on stderr) and every change is recorded before it is answered.
 * NULL when out of memory. */
struct secrets *secrets_open(const char *state_root);
/* Wipes every value and frees everything. */
void secrets_close(struct secrets *ss);

/* The secret an identifier or a name (any case) refers to, or NULL. */
const struct secret *secrets_find(const struct secrets *ss, const char *ref);
/* A malloc'd copy of the current value of the secret ref (an identifier or
 * a name) names, which the caller wipes (explicit_bzero) and frees; NULL
 * when there is none. Only for the egress proxy: no route answers it. */
char *secrets_value(const struct secrets *ss, const char *ref);
/* In creation order (ties by id), which the list's cursor relies on. */
size_t secrets_count(const struct secrets *ss);
const struct secret *secrets_at(const struct secrets *ss, size_t i);

/* metadata (an object of strings within the limits above, or NULL for
 * none) is copied. NULL with err on refusal. */
const struct secret *secrets_create(struct secrets *ss, const char *name, const char *value,
	const struct cJSON *metadata, struct err *err);
/* A new version with value; metadata replaces the stored one when given
 * (non-NULL), else it is kept. */
const struct secret *secrets_update(struct secrets *ss, const char *ref, const char *value,
	const struct cJSON *metadata, struct err *err);
/* 0, or -1 with err (404 unknown). */
int secrets_delete(struct secrets *ss, const char *ref, struct err *err);

#endif
