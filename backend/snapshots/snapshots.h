/* snapshots/ — E2B's snapshots and forks of a sandbox.
 * Owns: the snapshots (a sealed copy of a sandbox's writable layer on top of
 * its stack of layers, under an E2B name, snapshots_names.h), their records
 * (records/snapshots/<id>.json), capturing a sandbox (freeze, seal its
 * writable layer into a layer with canonical ids, thaw: snapshots_capture.h),
 * the stacks sandboxes are created from (a snapshot's, a fork's), and
 * collecting the layers it sealed once no snapshot and no sandbox (running,
 * paused or kept across a restart) stands on them.
 * A snapshot may also keep its sandbox's processes (a checkpoint image,
 * registry_fork_image, kept by id under <root>/snapshot-images/); its
 * sandboxes and forks are given them by api/ where CRIU works, else they
 * start fresh processes on the files (E2B's filesystem-only mode).
 * May call: registry/ (the sandboxes, their hooks), runtime/ (freeze, the
 * writable layer), store/ (layers, records), lib/. */
#ifndef E2B_BACKEND_SNAPSHOTS_H
#define E2B_BACKEND_SNAPSHOTS_H

#include "snapshots/snapshots_names.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct registry;
struct sandbox;
struct snapshots;

#define SNAPSHOT_ID_LEN 20

struct snapshot {
	char id[SNAPSHOT_ID_LEN + 1]; /* raw id: the record's name */
	char *name;                   /* NULL: unnamed */
	char tag[SNAPSHOTS_NAME_MAX + 1];
	char sandbox_id[SNAPSHOT_ID_LEN + 1]; /* the sandbox it was taken of */
	char *template_id;                    /* that sandbox's template */
	char *default_user;                   /* that sandbox's (registry.h), NULL none */
	char *default_workdir;
	char **layers; /* layer ids, bottom first */
	size_t layer_count;
	int cpu_count, memory_mb, disk_size_mb;
	int64_t created_ms;
};

/* persist: keep records (--state-dir) and load those of an earlier run.
 * state_root holds the images of snapshots' processes either way. */
struct snapshots *snapshots_new(struct event_base *base, struct registry *reg, const char *state_root,
	bool persist);
void snapshots_free(struct snapshots *ss);

size_t snapshots_count(const struct snapshots *ss);
const struct snapshot *snapshots_at(const struct snapshots *ss, size_t i);
/* E2B's snapshotID of s (SNAPSHOTS_ID_TEXT_MAX bytes). */
void snapshots_id_of(const struct snapshot *s, char *out);
/* Whether s answers to ref: exactly (name or id, and tag), or any tag when
 * any_tag and the reference had none. */
bool snapshots_matches(const struct snapshot *s, const struct snapshot_ref *ref, bool any_tag);
/* The snapshot a sandbox create names (templateID), or NULL. */
const struct snapshot *snapshots_resolve(const struct snapshots *ss, const char *text);
/* The stack of s as the runtime takes it (layer roots, bottom first) in
 * roots (at most max): the count, or -1 when a layer is missing. */
int snapshots_roots(const struct snapshot *s, const char **roots, size_t max);

/* Deletes the snapshots ref names (every tag of a name given without one):
 * the count deleted (0: none matched). Their layers are collected. */
size_t snapshots_delete(struct snapshots *ss, const struct snapshot_ref *ref);

/* Adds a snapshot of a captured sandbox (snapshots_capture.h): layers are
 * the sandbox's stack with its sealed layer on top; image (NULL: none) the
 * directory of its processes' checkpoint (registry_fork_image), moved in. A name:tag taken is
 * given to the new one (E2B assigns a new build to the name). The record is
 * written first; NULL when that fails. */
const struct snapshot *snapshots_add(struct snapshots *ss, const struct sandbox *sb, const char *name,
	const char *tag, const char *const *layer_ids, size_t layer_count, const char *image);
/* The directory of s's processes (the image, a directory, given to
 * snapshots_add, moved under the root's snapshot-images/ and removed with
 * the snapshot) in out, or "" when it has none. */
void snapshots_image_of(const struct snapshots *ss, const struct snapshot *s, char *out, size_t len);

/* Removes the layers it sealed that nothing stands on (off the loop). */
void snapshots_collect(struct snapshots *ss);
/* Names every layer a snapshot or a capture in progress stands on (its
 * template's too) by calling keep(set, id): for another collector
 * (templates/), so that deleting a template never takes layers from under a
 * snapshot of its sandboxes, nor a collection the built-in template's layer
 * from under a capture. */
void snapshots_keep_layers(void *ss, void (*keep)(void *set, const char *id), void *set);

#endif
