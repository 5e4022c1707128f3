/* A secret's record, records/secrets/<id>.json (store/store_records.h):
 * its metadata and its current value, so that the state directory's
 * secrets outlive the backend. The record is the one place a value is
 * written to disk: mode 0600 in a 0700 directory, written atomically and
 * synced before the change is answered. */
#ifndef E2B_BACKEND_SECRETS_RECORDS_H
#define E2B_BACKEND_SECRETS_RECORDS_H

#include "secrets/secrets.h"

/* Writes (or replaces) the record. 0, or -1 with errno. */
int secrets_records_write(const char *state_root, const struct secret *s, const char *value);
/* 0 (a missing record too), or -1 with errno. */
int secrets_records_delete(const char *state_root, const char *id);

/* Calls fn for each record that holds a whole secret; s->metadata and
 * value are fn's to keep or free. Records that are not one are skipped
 * with a line on stderr that names the file only. */
typedef void (*secrets_records_fn)(void *ctx, struct secret *s, char *value);
void secrets_records_load(const char *state_root, secrets_records_fn fn, void *ctx);

#endif
