/* Squashing a stack of layers into one (store_squash.h). */
#define _GNU_SOURCE
#include "store/store_squash.h"

#include "lib/err.h"
#include "lib/text.h"
#include "lib/tree_remove.h"
#include "store/store_helper.h"
#include "store/store_shift.h"

#include <errno.h>
#include <fts.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct squash_job {
	struct squash_job *next;
	char **roots;
	size_t n;
	char id[STORE_NAME_MAX + 1];
	char parent[STORE_NAME_MAX + 1];
	char origin[64];
	char *scratch; /* layers/.tmp-<random>, where the helper makes it */
	store_layer_done done;
	void *ctx;
};
static struct squash_job *jobs; /* those running, for store_squash_cancel */

/* What layer.json says of a layer's size: its files' and links' bytes. */
static int tree_bytes(const char *dir, uint64_t *bytes, struct err *err)
{
	char *copy = strdup(dir); /* fts_open takes char *const * */
	char *paths[] = {copy, NULL};
	FTS *fts = copy ? fts_open(paths, FTS_PHYSICAL | FTS_NOCHDIR, NULL) : NULL;
	FTSENT *e;
	int rc = fts ? 0 : -1;
	*bytes = 0;
	while (rc == 0 && fts && (e = fts_read(fts)) != NULL) {
		if (e->fts_info == FTS_F || e->fts_info == FTS_SL)
			*bytes += (uint64_t)e->fts_statp->st_size;
		else if (e->fts_info == FTS_DNR || e->fts_info == FTS_ERR || e->fts_info == FTS_NS)
			rc = -1;
	}
	if (rc != 0)
		err_set(err, errno, "cannot measure the merged layer: %s", strerror(errno));
	if (fts)
		fts_close(fts);
	free(copy);
	return rc;
}

int store_squash_merge(const char *const *roots, size_t n, const char *dst, uint64_t *bytes, struct err *err)
{
	if (n < 2) {
		err_set(err, 0, "a stack of %zu layers has nothing to squash", n);
		return -1;
	}
	for (size_t i = 1; i < n; i++)
		if (store_shift_merge(roots[i], dst, roots[0], err) != 0)
			return -1;
	return tree_bytes(dst, bytes, err);
}

static void job_free(struct squash_job *job)
{
	for (struct squash_job **pp = &jobs; *pp; pp = &(*pp)->next) {
		if (*pp == job) {
			*pp = job->next;
			break;
		}
	}
	for (size_t i = 0; job->roots && i < job->n; i++)
		free(job->roots[i]);
	free(job->roots);
	free(job->scratch);
	free(job);
}

/* In the helper. */
static int squash_run(void *arg, struct err *err)
{
	struct squash_job *job = arg;
	uint64_t bytes = 0;
	char *root = text_printf("%s/root", job->scratch);
	int rc = root ? store_squash_merge((const char *const *)job->roots, job->n, root, &bytes, err) : -1;
	if (rc == 0)
		rc = store_layer_publish(job->scratch, job->id, job->parent, job->origin, bytes, err);
	if (rc != 0)
		tree_remove(job->scratch);
	free(root);
	return rc;
}

static void squash_done(void *ctx, const struct err *err)
{
	struct squash_job *job = ctx;
	struct err unread;
	const struct store_layer *l = store_layer_adopt(job->id);
	if (err) {
		/* Killed (store_squash_cancel) or failed: what it made goes. A layer
		 * it published just before is complete and known to the store
		 * (adopted above), for its owner's collection; it is not given. */
		l = NULL;
		if (access(job->scratch, F_OK) == 0) {
			store_scratch_remove(job->scratch); /* frees it */
			job->scratch = NULL;
		}
	} else if (!l) {
		err = &unread;
		err_set(&unread, 0, "layer %s was made but cannot be read back", job->id);
	}
	store_layer_done done = job->done;
	void *done_ctx = job->ctx;
	job_free(job);
	done(done_ctx, l, err);
}

int store_squash_start(struct event_base *base, const char *const *ids, size_t n, const char *id,
	const char *origin, store_layer_done done, void *ctx)
{
	if (n < 2 || !done || !store_name_valid(id) || strlen(origin) >= 64) {
		errno = EINVAL;
		return -1;
	}
	if (store_layer_find(id)) {
		errno = EEXIST;
		return -1;
	}
	struct squash_job *job = calloc(1, sizeof *job);
	if (!job || !(job->roots = calloc(n, sizeof *job->roots))) {
		free(job);
		return -1;
	}
	job->n = n;
	for (size_t i = 0; i < n; i++) {
		const struct store_layer *l = store_layer_find(ids[i]);
		if (!l || !(job->roots[i] = strdup(l->root))) {
			job_free(job);
			errno = l ? ENOMEM : ENOENT;
			return -1;
		}
	}
	snprintf(job->id, sizeof job->id, "%s", id);
	snprintf(job->parent, sizeof job->parent, "%s", ids[0]);
	snprintf(job->origin, sizeof job->origin, "%s", origin);
	job->done = done;
	job->ctx = ctx;
	job->scratch = store_scratch_new();
	if (!job->scratch || store_helper_run(base, "e2b-squash", squash_run, job, squash_done, job) != 0) {
		int e = errno;
		if (job->scratch)
			store_scratch_remove(job->scratch);
		job->scratch = NULL;
		job_free(job);
		errno = e;
		return -1;
	}
	job->next = jobs;
	jobs = job;
	return 0;
}

int store_squash_cancel(void *ctx)
{
	for (struct squash_job *job = jobs; job; job = job->next)
		if (job->ctx == ctx)
			return store_helper_kill(job);
	errno = ESRCH;
	return -1;
}
