/* The secrets (secrets.h): their table, in creation order, and its changes,
 * each recorded before memory is changed so that a failed write changes
 * nothing. */
#define _GNU_SOURCE /* explicit_bzero */
#include "secrets/secrets.h"

#include "lib/clock.h"
#include "secrets/secrets_names.h"
#include "secrets/secrets_records.h"

#include <cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pub first: a struct secret * handed out is the item's address. */
struct item {
	struct secret pub;
	char *value;
};

struct secrets {
	char *state_root; /* NULL: in memory only */
	struct item **items;
	size_t count, cap;
};

static void value_free(char *value)
{
	if (value)
		explicit_bzero(value, strlen(value));
	free(value);
}

static void item_free(struct item *it)
{
	if (!it)
		return;
	cJSON_Delete(it->pub.metadata);
	value_free(it->value);
	free(it);
}

static int grow(struct secrets *ss)
{
	if (ss->count < ss->cap)
		return 0;
	size_t cap = ss->cap ? ss->cap * 2 : 16;
	struct item **items = realloc(ss->items, cap * sizeof *items);
	if (!items)
		return -1;
	ss->items = items;
	ss->cap = cap;
	return 0;
}

static bool sorts_before(const struct secret *a, const struct secret *b)
{
	return a->created_ms != b->created_ms ? a->created_ms < b->created_ms : strcmp(a->id, b->id) < 0;
}

/* Into its place in creation order (a new one goes last: its time is now). */
static void insert(struct secrets *ss, struct item *it)
{
	size_t i = ss->count;
	while (i > 0 && sorts_before(&it->pub, &ss->items[i - 1]->pub))
		i--;
	memmove(ss->items + i + 1, ss->items + i, (ss->count - i) * sizeof *ss->items);
	ss->items[i] = it;
	ss->count++;
}

static const struct secret *find_name(const struct secrets *ss, const char *name)
{
	for (size_t i = 0; i < ss->count; i++)
		if (strcmp(ss->items[i]->pub.name, name) == 0)
			return &ss->items[i]->pub;
	return NULL;
}

static void restore_one(void *ctx, struct secret *s, char *value)
{
	struct secrets *ss = ctx;
	struct item *it = calloc(1, sizeof *it);
	if (!it || grow(ss) != 0 || secrets_find(ss, s->id) || find_name(ss, s->name)) {
		fprintf(stderr, "e2b-local-backend: cannot bring back secret %s: %s\n", s->id,
			it ? "its name or identifier is taken" : "out of memory");
		cJSON_Delete(s->metadata);
		value_free(value);
		free(it);
		return;
	}
	it->pub = *s;
	it->value = value;
	insert(ss, it);
}

struct secrets *secrets_open(const char *state_root)
{
	struct secrets *ss = calloc(1, sizeof *ss);
	if (!ss)
		return NULL;
	if (state_root) {
		if (!(ss->state_root = strdup(state_root))) {
			free(ss);
			return NULL;
		}
		secrets_records_load(state_root, restore_one, ss);
	}
	return ss;
}

void secrets_close(struct secrets *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; i < ss->count; i++)
		item_free(ss->items[i]);
	free(ss->items);
	free(ss->state_root);
	free(ss);
}

/* The index of the secret ref names, or ss->count. */
static size_t index_of(const struct secrets *ss, const char *ref)
{
	char lower[SECRETS_NAME_MAX + 1];
	size_t n = strlen(ref);
	if (n == 0 || n > SECRETS_NAME_MAX)
		return ss->count;
	for (size_t i = 0; i <= n; i++)
		lower[i] = ref[i] >= 'A' && ref[i] <= 'Z' ? (char)(ref[i] - 'A' + 'a') : ref[i];
	size_t i = 0;
	while (i < ss->count && strcmp(ss->items[i]->pub.id, lower) != 0 &&
		strcmp(ss->items[i]->pub.name, lower) != 0)
		i++;
	return i;
}

const struct secret *secrets_find(const struct secrets *ss, const char *ref)
{
	size_t i = index_of(ss, ref);
	return i < ss->count ? &ss->items[i]->pub : NULL;
}

char *secrets_value(const struct secrets *ss, const char *ref)
{
	size_t i = index_of(ss, ref);
	return i < ss->count ? strdup(ss->items[i]->value) : NULL;
}

size_t secrets_count(const struct secrets *ss)
{
	return ss->count;
}

const struct secret *secrets_at(const struct secrets *ss, size_t i)
{
	return i < ss->count ? &ss->items[i]->pub : NULL;
}

/* A value goes into the headers of requests (transform rules): a byte a
 * header cannot carry (a control byte but tab, or DEL) is refused now, not
 * when a rule first uses it. The refusal names the byte, never the value. */
static bool value_sendable(const char *value, struct err *err)
{
	for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
		if (*p == '\t' || (*p >= 0x20 && *p != 0x7f))
			continue;
		if (*p == '\r')
			err_set(err, 400,
				"value must not contain a carriage return (CR, \\r): it goes into HTTP "
				"headers, which cannot carry one");
		else if (*p == '\n')
			err_set(err, 400,
				"value must not contain a line feed (LF, \\n): it goes into HTTP headers, "
				"which cannot carry one");
		else
			err_set(err, 400,
				"value must not contain the control character 0x%02X: it goes into HTTP "
				"headers, which cannot carry one",
				*p);
		return false;
	}
	return true;
}

static bool value_ok(const char *value, struct err *err)
{
	size_t n = strlen(value);
	if (n == 0)
		err_set(err, 400, "value must not be empty");
	else if (n > SECRETS_VALUE_MAX)
		err_set(err, 400, "value may be at most %d bytes", SECRETS_VALUE_MAX);
	return n > 0 && n <= SECRETS_VALUE_MAX && value_sendable(value, err);
}

/* The record of s with value, when secrets are kept on disk. */
static int save(const struct secrets *ss, const struct secret *s, const char *value, struct err *err)
{
	if (!ss->state_root || secrets_records_write(ss->state_root, s, value) == 0)
		return 0;
	err_set(err, 500, "cannot write the secret's record: %s", strerror(errno));
	return -1;
}

static cJSON *metadata_copy(const cJSON *metadata)
{
	return metadata ? cJSON_Duplicate(metadata, true) : cJSON_CreateObject();
}

const struct secret *secrets_create(struct secrets *ss, const char *name, const char *value,
	const cJSON *metadata, struct err *err)
{
	char canonical[SECRETS_NAME_MAX + 1];
	if (secrets_names_canonical(name, canonical, err) != 0)
		return NULL;
	if (!value_ok(value, err))
		return NULL;
	if (find_name(ss, canonical)) {
		err_set(err, 409, "Secret with name '%s' already exists", canonical);
		return NULL;
	}
	if (ss->count >= SECRETS_MAX_COUNT) {
		err_set(err, 403, "this backend holds at most %d secrets: delete one first",
			SECRETS_MAX_COUNT);
		return NULL;
	}
	struct item *it = calloc(1, sizeof *it);
	if (!it || grow(ss) != 0 || !(it->pub.metadata = metadata_copy(metadata)) ||
		!(it->value = strdup(value)) || secrets_names_new_id(it->pub.id) != 0) {
		item_free(it);
		err_set(err, 500, "out of memory");
		return NULL;
	}
	memcpy(it->pub.name, canonical, sizeof canonical);
	it->pub.version = 1;
	it->pub.created_ms = it->pub.updated_ms = clock_now_ms();
	if (save(ss, &it->pub, it->value, err) != 0) {
		item_free(it);
		return NULL;
	}
	insert(ss, it);
	return &it->pub;
}

const struct secret *secrets_update(struct secrets *ss, const char *ref, const char *value,
	const cJSON *metadata, struct err *err)
{
	size_t i = index_of(ss, ref);
	if (i == ss->count) {
		err_set(err, 404, "Secret '%.128s' not found", ref);
		return NULL;
	}
	if (!value_ok(value, err))
		return NULL;
	struct item *it = ss->items[i];
	/* The new state, recorded first; swapped in only once it is on disk. */
	struct secret next = it->pub;
	next.metadata = metadata ? cJSON_Duplicate(metadata, true) : it->pub.metadata;
	char *copy = strdup(value);
	if (!next.metadata || !copy) {
		if (metadata)
			cJSON_Delete(next.metadata);
		value_free(copy);
		err_set(err, 500, "out of memory");
		return NULL;
	}
	next.version++;
	/* Never before the creation, even if the clock stepped back. */
	int64_t now = clock_now_ms();
	next.updated_ms = now > it->pub.created_ms ? now : it->pub.created_ms;
	if (save(ss, &next, copy, err) != 0) {
		if (metadata)
			cJSON_Delete(next.metadata);
		value_free(copy);
		return NULL;
	}
	if (metadata)
		cJSON_Delete(it->pub.metadata);
	value_free(it->value);
	it->pub = next;
	it->value = copy;
	return &it->pub;
}

int secrets_delete(struct secrets *ss, const char *ref, struct err *err)
{
	size_t i = index_of(ss, ref);
	if (i == ss->count) {
		err_set(err, 404, "Secret '%.128s' not found", ref);
		return -1;
	}
	struct item *it = ss->items[i];
	if (ss->state_root && secrets_records_delete(ss->state_root, it->pub.id) != 0) {
		err_set(err, 500, "cannot remove the secret's record: %s", strerror(errno));
		return -1;
	}
	memmove(ss->items + i, ss->items + i + 1, (ss->count - i - 1) * sizeof *ss->items);
	ss->count--;
	item_free(it);
	return 0;
}
