/* Secrets' records (secrets_records.h). */
#define _GNU_SOURCE /* explicit_bzero */
#include "secrets/secrets_records.h"

#include "secrets/secrets_names.h"
#include "store/store_records.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORDS_KIND "secrets"

/* Wipes the value's copy in a record before cJSON frees it. */
static void record_free(cJSON *record)
{
	cJSON *value = cJSON_GetObjectItemCaseSensitive(record, "value");
	if (cJSON_IsString(value) && value->valuestring)
		explicit_bzero(value->valuestring, strlen(value->valuestring));
	cJSON_Delete(record);
}

int secrets_records_write(const char *state_root, const struct secret *s, const char *value)
{
	cJSON *r = cJSON_CreateObject();
	cJSON *meta = s->metadata ? cJSON_Duplicate(s->metadata, true) : cJSON_CreateObject();
	int ok = r && meta && cJSON_AddStringToObject(r, "secretID", s->id) &&
		cJSON_AddStringToObject(r, "name", s->name) &&
		cJSON_AddNumberToObject(r, "version", (double)s->version) &&
		cJSON_AddNumberToObject(r, "createdAt", (double)s->created_ms) &&
		cJSON_AddNumberToObject(r, "updatedAt", (double)s->updated_ms) &&
		cJSON_AddItemToObject(r, "metadata", meta);
	if (!ok)
		cJSON_Delete(meta);
	meta = NULL;
	ok = ok && cJSON_AddStringToObject(r, "value", value);
	int rc = ok ? store_records_write(state_root, RECORDS_KIND, s->id, r, STORE_DURABLE) : -1;
	int e = ok ? errno : ENOMEM;
	record_free(r);
	errno = e;
	return rc;
}

int secrets_records_delete(const char *state_root, const char *id)
{
	return store_records_delete(state_root, RECORDS_KIND, id, STORE_DURABLE);
}

static bool metadata_valid(const cJSON *m)
{
	if (!cJSON_IsObject(m))
		return false;
	const cJSON *e;
	cJSON_ArrayForEach(e, m)
		if (!cJSON_IsString(e) || !e->valuestring)
			return false;
	return true;
}

/* The integer member name (>= min), or -1. */
static int64_t integer(const cJSON *record, const char *name, int64_t min)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(record, name);
	if (!cJSON_IsNumber(n) || !(n->valuedouble >= (double)min && n->valuedouble < 9.0e15) ||
		(double)(int64_t)n->valuedouble != n->valuedouble)
		return -1;
	return (int64_t)n->valuedouble;
}

struct load {
	secrets_records_fn fn;
	void *ctx;
};

static int load_one(void *arg, const char *id, cJSON *record)
{
	struct load *l = arg;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(record, "name"));
	const char *rid = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(record, "secretID"));
	const char *value = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(record, "value"));
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(record, "metadata");
	struct secret s = {.version = integer(record, "version", 1),
		.created_ms = integer(record, "createdAt", 0),
		.updated_ms = integer(record, "updatedAt", 0)};
	size_t vlen = value ? strlen(value) : 0;
	bool whole = name && rid && strcmp(rid, id) == 0 && secrets_names_is_id(id) &&
		secrets_names_canonical(name, s.name, NULL) == 0 && strcmp(name, s.name) == 0 && vlen > 0 &&
		vlen <= SECRETS_VALUE_MAX && metadata_valid(meta) && s.version >= 1 && s.created_ms >= 0 &&
		s.updated_ms >= 0;
	char *copy = whole ? strdup(value) : NULL;
	if (copy)
		s.metadata = cJSON_DetachItemViaPointer(record, meta);
	if (!s.metadata) {
		if (copy)
			explicit_bzero(copy, vlen);
		free(copy);
		fprintf(stderr, "e2b-local-backend: records/%s/%s.json is not a secret's record; ignored\n",
			RECORDS_KIND, id);
	} else {
		memcpy(s.id, id, SECRETS_ID_LEN + 1);
		l->fn(l->ctx, &s, copy);
	}
	record_free(record);
	return 0;
}

void secrets_records_load(const char *state_root, secrets_records_fn fn, void *ctx)
{
	struct load l = {.fn = fn, .ctx = ctx};
	if (store_records_each(state_root, RECORDS_KIND, load_one, &l) < 0)
		fprintf(stderr, "e2b-local-backend: cannot read the secrets' records: %s\n", strerror(errno));
}
