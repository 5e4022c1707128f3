/* Account names by id, read once per request (see fs_owners.h). */
#include "envd/fs/fs_owners.h"

#include "runtime/runtime_users.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct owner_name {
	unsigned id;
	unsigned order; /* the line's place: the first line of an id wins, as a scan finds it */
	char *name;
};

struct owner_table {
	struct owner_name *v;
	size_t n, cap;
	bool failed;
};

struct fs_owners {
	struct owner_table users, groups;
};

static void table_add(const char *name, unsigned id, void *arg)
{
	struct owner_table *t = arg;
	if (t->failed)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct owner_name *grown = realloc(t->v, cap * sizeof *grown);
		if (!grown) {
			t->failed = true;
			return;
		}
		t->v = grown;
		t->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy) {
		t->failed = true;
		return;
	}
	t->v[t->n] = (struct owner_name){.id = id, .order = (unsigned)t->n, .name = copy};
	t->n++;
}

static int by_id(const void *a, const void *b)
{
	const struct owner_name *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* An empty table has no array at all, and qsort's is declared non-null
 * (undefined behaviour even for no elements): nothing to sort then. */
static void table_sort(struct owner_table *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof *t->v, by_id);
}

static void table_free(struct owner_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

struct fs_owners *fs_owners_load(const struct sandbox *sb)
{
	struct fs_owners *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	runtime_accounts_each(sb, false, table_add, &o->users);
	runtime_accounts_each(sb, true, table_add, &o->groups);
	if (o->users.failed || o->groups.failed) {
		fs_owners_free(o);
		return NULL;
	}
	table_sort(&o->users);
	table_sort(&o->groups);
	return o;
}

void fs_owners_free(struct fs_owners *o)
{
	if (!o)
		return;
	table_free(&o->users);
	table_free(&o->groups);
	free(o);
}

/* The first entry for id (the table is sorted by id, then line). */
static void name_of(const struct owner_table *t, unsigned id, char *buf, size_t cap)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && t->v[lo].id == id && strlen(t->v[lo].name) < cap)
		snprintf(buf, cap, "%s", t->v[lo].name);
	else
		snprintf(buf, cap, "%u", id);
}

void fs_owners_user(const struct fs_owners *o, uid_t uid, char *buf, size_t cap)
{
	name_of(&o->users, (unsigned)uid, buf, cap);
}

void fs_owners_group(const struct fs_owners *o, gid_t gid, char *buf, size_t cap)
{
	name_of(&o->groups, (unsigned)gid, buf, cap);
}
